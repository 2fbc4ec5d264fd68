"""Several machines on one: each a network namespace with its own address on a bridge, for the deployment test.

The database machine runs a PostgreSQL cluster and a Redis server of its
own (nothing of the test run's database is touched); the service's machines
run the commands of deploy/systemd/'s units, with the environment of
deploy/flowgate.env.example; nginx, configured by deploy/nginx/flowgate.conf,
balances them from this namespace. Cutting a machine off takes its link down:
its packets are dropped, as a switch port or a cable lost would drop them,
and its processes go on unaware.
"""

import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

from benchmarks.clusters import PrivatePostgres, binaries
from tests.e2e.stack import ROOT, die_with_the_test_run, wait_until
from tests.local_apps import QuietHandler

DEPLOY = ROOT / "deploy"


def missing() -> str | None:
    """Why machines cannot be made here, or None: namespaces need root, and the parts come from Debian."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "nginx", "redis-server", "runuser"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (make install installs nginx as root)"
    if not binaries():
        return "PostgreSQL's server binaries are not installed"
    return None


def _ip(*args: str, netns: str | None = None) -> None:
    command = ["ip", *args] if netns is None else ["ip", "netns", "exec", netns, "ip", *args]
    subprocess.run(command, check=True, capture_output=True)


class Network:
    """A bridge in this namespace and one namespace per machine; names carry a random tag, so runs never meet."""

    def __init__(self):
        self.tag = f"{random.randrange(16**4):04x}"
        self.subnet = random.randrange(64, 250)
        self.bridge = f"fgb{self.tag}"
        self.gateway = f"10.77.{self.subnet}.1"
        self.machines: dict[str, str] = {}  # name: its address
        self.links: dict[str, str] = {}  # name: the bridge's end of its cable
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")

    def namespace(self, name: str) -> str:
        return f"fg{self.tag}-{name}"

    def add(self, name: str) -> str:
        """A machine: its namespace, a cable to the bridge, an address; returns the address."""
        number = len(self.machines) + 2
        address, netns = f"10.77.{self.subnet}.{number}", self.namespace(name)
        outside, inside = f"fgv{self.tag}{number}", f"fgi{self.tag}{number}"
        _ip("netns", "add", netns)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        _ip("link", "set", inside, "netns", netns)
        _ip("link", "set", outside, "master", self.bridge, "up")
        _ip("link", "set", "lo", "up", netns=netns)
        _ip("addr", "add", f"{address}/24", "dev", inside, netns=netns)
        _ip("link", "set", inside, "up", netns=netns)
        _ip("route", "add", "default", "via", self.gateway, netns=netns)
        self.machines[name], self.links[name] = address, outside
        return address

    def cut(self, name: str) -> None:
        _ip("link", "set", self.links[name], "down")

    def mend(self, name: str) -> None:
        _ip("link", "set", self.links[name], "up")

    def close(self) -> None:
        for name in self.machines:
            subprocess.run(["ip", "netns", "del", self.namespace(name)], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)


class Machines:
    """The service on several machines: a database machine, and the units' processes each on a machine of its own."""

    def __init__(self, network: Network, workdir: Path):
        self.network, self.workdir = network, workdir
        self.processes: dict[str, subprocess.Popen] = {}
        self.postgres: PrivatePostgres | None = None

    def start_database(self) -> str:
        """PostgreSQL and Redis on the machine "db", reached over the bridge; returns its address."""
        address = self.network.add("db")
        self.postgres = PrivatePostgres(
            5432,
            host=address,
            netns=self.network.namespace("db"),
            clients=f"10.77.{self.network.subnet}.0/24",
            max_connections=300,
        )
        self.postgres.start()
        # On a private network without a password: protected mode would refuse every other machine.
        redis = ["redis-server", "--bind", address, "--port", "6379", "--save", "", "--protected-mode", "no"]
        self._start("redis", "db", redis)
        wait_until(
            lambda: subprocess.run(["redis-cli", "-h", address, "ping"], capture_output=True).returncode == 0,
            message="redis on the database machine",
        )
        self.postgres.create_database("flowgate")
        return address

    def run_unit(self, name: str, machine: str, unit: str, environment: dict) -> None:
        """The unit's ExecStart, in its working directory, with its EnvironmentFile and Environment lines, run on
        the machine: /opt/flowgate (the units' install path) is this checkout."""
        command, unit_environment = unit_command(DEPLOY / "systemd" / unit)
        self._start(name, machine, command, {**environment, **unit_environment})

    def _start(self, name: str, machine: str, command: list[str], environment: dict | None = None) -> None:
        log = open(self.workdir / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process's end)
        self.processes[name] = subprocess.Popen(
            ["ip", "netns", "exec", self.network.namespace(machine), *command],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_the_test_run,
        )

    def log(self, name: str) -> str:
        return (self.workdir / f"{name}.log").read_text(errors="replace")

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.postgres is not None:
            self.postgres.destroy()


def unit_command(path: Path) -> tuple[list[str], dict]:
    """A systemd unit's ExecStart as a command, and its Environment= lines; its paths moved to this checkout."""
    text = path.read_text()
    exec_start = re.search(r"^ExecStart=(.+)$", text, re.MULTILINE).group(1)
    environment = dict(line.split("=", 1) for line in re.findall(r"^Environment=(.+)$", text, re.MULTILINE))
    assert re.search(r"^WorkingDirectory=/opt/flowgate$", text, re.MULTILINE), f"{path.name}: WorkingDirectory"
    assert re.search(r"^EnvironmentFile=/etc/flowgate/flowgate.env$", text, re.MULTILINE), path.name
    command = exec_start.replace("/opt/flowgate/.venv/bin/", str(Path(sys.executable).parent) + "/").split()
    return command, environment


def environment_file(values: dict) -> dict:
    """deploy/flowgate.env.example read as systemd reads it, each of its keys given a value for these machines."""
    found = {}
    for line in (DEPLOY / "flowgate.env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, _example = line.partition("=")
            assert key in values, f"flowgate.env.example has {key}, which the test gives no value"
            found[key] = values[key]
    return found


def nginx_config(*, listen: str, web: list[str], hooks: list[str], base_host: str, hooks_host: str, logs: Path) -> str:
    """deploy/nginx/flowgate.conf with its example hosts, addresses and log folder replaced, nothing else changed."""
    text = (DEPLOY / "nginx" / "flowgate.conf").read_text().replace("/var/log/nginx/", f"{logs}/")
    for example, real in zip(("10.0.0.11", "10.0.0.12"), web, strict=True):
        text = text.replace(f"{example}:8000", f"{real}:8000")
    for example, real in zip(("10.0.0.21", "10.0.0.22"), hooks, strict=True):
        text = text.replace(f"{example}:8001", f"{real}:8001")
    text = text.replace("hooks.flowgate.example.com", hooks_host).replace("flowgate.example.com", base_host)
    return text.replace("listen 80;", f"listen {listen};")


def start_nginx(workdir: Path, config: str) -> subprocess.Popen:
    """nginx in this namespace (the balancer machine), in the foreground, with the site's config as its http block."""
    (workdir / "nginx").mkdir(exist_ok=True)
    main = f"""
daemon off;
user root;  # its temporary files live in the test's directory
worker_processes 1;
pid {workdir}/nginx/nginx.pid;
error_log {workdir}/nginx/error.log warn;
events {{ worker_connections 1024; }}
http {{
    client_body_temp_path {workdir}/nginx/body;
    proxy_temp_path {workdir}/nginx/proxy;
    include {workdir}/nginx/flowgate.conf;
}}
"""
    (workdir / "nginx" / "flowgate.conf").write_text(config)
    (workdir / "nginx" / "nginx.conf").write_text(main)
    process = subprocess.Popen(
        ["nginx", "-c", str(workdir / "nginx" / "nginx.conf"), "-e", str(workdir / "nginx" / "error.log")],
        preexec_fn=die_with_the_test_run,
    )
    time.sleep(0.2)
    if process.poll() is not None:
        raise RuntimeError((workdir / "nginx" / "error.log").read_text())
    return process


class SlowServer(ThreadingHTTPServer):
    """Answers each GET after `seconds`; while held, a GET waits until released, its caller's address in `held`."""

    def __init__(self, address: str, seconds: float):
        self.seconds, self.held, self.gate = seconds, set(), threading.Event()
        self.gate.set()
        server = self

        class Slow(QuietHandler):
            def do_GET(self):
                if not server.gate.is_set():
                    server.held.add(self.client_address[0])
                    server.gate.wait(120)
                time.sleep(server.seconds)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        super().__init__((address, 0), Slow)
        self.port = self.server_port

    def hold(self) -> None:
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()


@contextmanager
def slow_server(address: str, seconds: float) -> Iterator[SlowServer]:
    """A SlowServer on this namespace's bridge address, for the machines' steps to call."""
    server = SlowServer(address, seconds)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.release()
        server.shutdown()
        server.server_close()
