"""A PostgreSQL cluster and a Redis server of one run's own, so that stopping them, or filling the database's disk,
touches no one else's: the fault measurements (benchmarks/faults.py), the end-to-end outage test and the
several-machines test's database machine (tests/e2e/machines.py) use them.

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


def _listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


def _mount_tmpfs(path: Path, megabytes: int) -> bool:
    """path made, and a tmpfs of that size mounted on it when megabytes is given; whether it was mounted."""
    path.mkdir()
    if not megabytes:
        return False
    command = ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m,mode=0755", "tmpfs", str(path)]
    return subprocess.run(command, capture_output=True).returncode == 0


def _fill(filler: Path) -> None:
    """Write zeroes to filler until its file system has no byte left (unbuffered: no write is left to fail at close)."""
    with open(filler, "wb", buffering=0) as out:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError:
                pass


class PrivatePostgres:
    """A throwaway cluster on a port of its own; its tables and its WAL each optionally on a tmpfs of their own.

    Two different disks full, met differently by PostgreSQL. The tables' (`disk_mb`): each INSERT that needs a new
    page fails with "No space left on device" and the server goes on. The WAL's (`wal_mb`): a backend that cannot
    make a new WAL segment PANICs, the server restarts to recover, its recovery cannot write either, and it shuts
    down until started again. Mounting needs root (and a machine that lets it): where it fails, that directory is
    on the ordinary disk and `can_fill` (or `can_fill_wal`) is False.

    host, netns and clients: a database machine of the several-machines test (tests/e2e/machines.py), listening
    on its own address inside a network namespace, and trusting the clients of that network.
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        disk_mb: int = 0,
        wal_mb: int = 0,
        host: str = "127.0.0.1",
        netns: str | None = None,
        clients: str | None = None,
        max_connections: int = 100,
    ):
        self.bin = binaries()
        if self.bin is None:
            raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql")
        self.port = port or free_port()
        self.host, self.netns = host, netns
        self.folder = Path(tempfile.mkdtemp(prefix="flowgate-pg-"))
        self.folder.chmod(0o755)
        self.disk = self.folder / "disk"
        self.data = self.disk / "data"
        self.wal_disk = self.folder / "wal-disk"
        self.wal = self.wal_disk / "wal"
        self.log = self.folder / "postgres.log"
        self.mounted = _mount_tmpfs(self.disk, disk_mb)
        self.wal_mounted = _mount_tmpfs(self.wal_disk, wal_mb)
        try:
            self._make(host, clients, max_connections)
        except BaseException:
            self.destroy()  # no mount or folder left behind by a cluster that was never made
            raise

    def _make(self, host: str, clients: str | None, max_connections: int) -> None:
        user = pwd.getpwnam("postgres")
        for path in (self.folder, self.disk, self.wal_disk):
            os.chown(path, user.pw_uid, user.pw_gid)
        self.filler = self.disk / "filler"
        self.wal_filler = self.wal_disk / "filler"
        self._postgres("initdb", "-D", self.data, "--waldir", self.wal, "-A", "trust", "-U", "postgres", "--no-sync")
        with open(self.data / "postgresql.conf", "a") as conf:
            # A scratch cluster: no fsync (its machine does not crash under it), and small, as a test's.
            conf.write(f"port = {self.port}\nlisten_addresses = '{host}'\nunix_socket_directories = '{self.folder}'\n")
            conf.write(
                f"fsync = off\nfull_page_writes = off\nshared_buffers = 32MB\nmax_connections = {max_connections}\n"
            )
            # Checkpoints often enough that the WAL stays within a small disk of its own until it is filled, and
            # no old segment renamed for reuse: once that disk is full, the next segment needs space it cannot have.
            conf.write("max_wal_size = 64MB\nmin_wal_size = 32MB\nwal_recycle = off\n")
        if clients:
            with open(self.data / "pg_hba.conf", "a") as hba:
                hba.write(f"host all all {clients} trust\n")

    @property
    def can_fill(self) -> bool:
        return self.mounted

    @property
    def can_fill_wal(self) -> bool:
        return self.wal_mounted

    def url(self, database: str) -> str:
        return f"postgres://postgres@{self.host}:{self.port}/{database}"

    def _postgres(self, program: str, *args) -> None:
        command = ["runuser", "-u", "postgres", "--", str(self.bin / program), *map(str, args)]
        if self.netns:
            command = ["ip", "netns", "exec", self.netns, *command]
        # No pipe of ours is held by the server it starts: its output goes to its log.
        subprocess.run(command, check=True, capture_output=True, cwd=self.folder, stdin=subprocess.DEVNULL)

    def start(self) -> None:
        self._postgres("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """fast: clients are disconnected and the cluster shuts down cleanly; immediate: as if it crashed."""
        self._postgres("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")

    def running(self) -> bool:
        return _listening(self.port, self.host)

    def create_database(self, name: str) -> None:
        self._postgres("createdb", "-h", self.host, "-p", self.port, "-U", "postgres", name)

    def fill_disk(self) -> None:
        """Take every free byte of the tables' file system."""
        _fill(self.filler)

    def free_disk(self) -> None:
        self.filler.unlink(missing_ok=True)

    def fill_wal(self) -> None:
        """Take every free byte of the WAL's file system, then have PostgreSQL move to its next segment, which it
        cannot make: without the switch, the segment under way could hold minutes of writes."""
        _fill(self.wal_filler)
        for _ in range(3):  # a segment made ahead of time (at a checkpoint) takes a switch of its own
            self.execute("SELECT pg_switch_wal()")
            time.sleep(0.2)

    def execute(self, sql: str) -> bool:
        """Run one statement as a client; whether it succeeded (the server may be failing, which is the point)."""
        command = ["psql", "-h", self.host, "-p", str(self.port), "-U", "postgres", "-d", "postgres", "-qAtc", sql]
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0

    def panicked_since(self, offset: int) -> bool:
        """Whether the server's log has a PANIC after offset (a size of the log read earlier)."""
        return self.log.exists() and b"PANIC:" in self.log.read_bytes()[offset:]

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def stopped(self) -> bool:
        """Whether no postmaster runs on the data directory (a server restarting after a crash still has one)."""
        return not (self.data / "postmaster.pid").exists()

    def free_wal(self) -> None:
        self.wal_filler.unlink(missing_ok=True)

    def destroy(self) -> None:
        if not self.stopped():  # whether or not it answers: a server cut off from its network still runs
            try:
                self.stop("immediate")
            except subprocess.CalledProcessError:
                pass
        for mounted, path in ((self.mounted, self.disk), (self.wal_mounted, self.wal_disk)):
            if mounted:
                subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)
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
