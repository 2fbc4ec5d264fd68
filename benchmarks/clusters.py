"""A PostgreSQL cluster and a Redis server of one run's own, so that stopping them, or filling the database's disk,
touches no one else's: the fault measurements (benchmarks/faults.py) and the end-to-end outage test use them.

The cluster is made with the Debian binaries (/usr/lib/postgresql/N/bin) and run as the postgres user:
initdb refuses root. Nothing here imports Django.
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def binaries() -> Path | None:
    """The newest PostgreSQL server's binaries on this machine, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


class PrivatePostgres:
    """A throwaway cluster on a port of its own; its data directory optionally on a tmpfs of `disk_mb` megabytes.

    The tmpfs holds the tables only (the WAL stays on the ordinary disk): filling it is a database whose disk is
    full for new rows (PostgreSQL answers each INSERT that needs a new page with "No space left on device"), not
    one that cannot write its log, which PostgreSQL meets with a PANIC and a crash restart. Mounting needs root
    (and a machine that lets it): where it fails, the tables are on the ordinary disk and `can_fill` is False.
    """

    def __init__(self, port: int | None = None, *, disk_mb: int = 0):
        self.bin = binaries()
        if self.bin is None:
            raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql")
        self.port = port or free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="flowgate-pg-"))
        self.folder.chmod(0o755)
        self.disk = self.folder / "disk"
        self.data = self.disk / "data"
        self.wal = self.folder / "wal"
        self.log = self.folder / "postgres.log"
        self.mounted = False
        self.disk.mkdir()
        if disk_mb:
            command = ["mount", "-t", "tmpfs", "-o", f"size={disk_mb}m,mode=0755", "tmpfs", str(self.disk)]
            self.mounted = subprocess.run(command, capture_output=True).returncode == 0
        user = pwd.getpwnam("postgres")
        for path in (self.folder, self.disk):
            os.chown(path, user.pw_uid, user.pw_gid)
        self.filler = self.disk / "filler"
        self._postgres("initdb", "-D", self.data, "--waldir", self.wal, "-A", "trust", "-U", "postgres", "--no-sync")
        with open(self.data / "postgresql.conf", "a") as conf:
            # A scratch cluster: no fsync (its machine does not crash under it), and small, as a test's.
            conf.write(
                f"port = {self.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{self.folder}'\n"
            )
            conf.write("fsync = off\nfull_page_writes = off\nshared_buffers = 32MB\nmax_connections = 100\n")

    @property
    def can_fill(self) -> bool:
        return self.mounted

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _postgres(self, program: str, *args) -> None:
        command = ["runuser", "-u", "postgres", "--", str(self.bin / program), *map(str, args)]
        subprocess.run(command, check=True, capture_output=True, cwd=self.folder)

    def start(self) -> None:
        self._postgres("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """fast: clients are disconnected and the cluster shuts down cleanly; immediate: as if it crashed."""
        self._postgres("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")

    def running(self) -> bool:
        return _listening(self.port)

    def create_database(self, name: str) -> None:
        self._postgres("createdb", "-h", "127.0.0.1", "-p", self.port, "-U", "postgres", name)

    def fill_disk(self) -> None:
        """Take every free byte of the data directory's file system."""
        free = shutil.disk_usage(self.disk).free
        with open(self.filler, "wb") as filler:
            block = b"\0" * (1 << 20)
            try:
                while free > 0:
                    filler.write(block)
                    free -= len(block)
                filler.flush()
                while True:  # what the estimate left
                    filler.write(b"\0" * 4096)
                    filler.flush()
            except OSError:
                pass

    def free_disk(self) -> None:
        self.filler.unlink(missing_ok=True)

    def destroy(self) -> None:
        if self.running():
            try:
                self.stop("immediate")
            except subprocess.CalledProcessError:
                pass
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.disk)], check=False, capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)


class PrivateRedis:
    """A redis-server of its own keeping nothing on disk: a restart loses every message it held."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.folder = Path(tempfile.mkdtemp(prefix="flowgate-redis-"))
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen([*command, "--dir", str(self.folder)], stdout=subprocess.DEVNULL)
        for _ in range(200):
            if _listening(self.port):
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        """SIGKILL: every message it held, queued or taken by a worker, is gone."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()

    def destroy(self) -> None:
        self.kill()
        shutil.rmtree(self.folder, ignore_errors=True)
