"""gunicorn's settings for the web processes: what the Procfile, the end-to-end tests and the benchmarks run.

Run: gunicorn config.wsgi -c edge/gunicorn.py (options on the command line win).

Threads: concurrent webhooks in one process share a commit (docs/webhooks.md).

reuse_port: each web process listens on a socket of its own and the kernel
deals new connections over them by a hash of their addresses. With one shared
socket, whichever process is waiting first takes the connection, and a
threaded process keeps the keep-alive connections it took: 32 connections
from a load balancer often landed 32/0 or 31/1 on two processes, leaving one
idle (benchmarks/RESULTS.md). The cost: any process of the same user could
join the port and take a share of its traffic unnoticed, so startup refuses
an address that is already listening.
"""

import logging
import sys

from config.env import env_bool, env_int, env_str
from config.startup_checks import is_loopback_bind
from edge.binds import is_listening

bind = env_str("WEB_BIND", "127.0.0.1:8000")
workers = env_int("WEB_CONCURRENCY", 2, minimum=1)
threads = env_int("WEB_THREADS", 8, minimum=1)
forwarded_allow_ips = env_str("FORWARDED_ALLOW_IPS", "127.0.0.1")
# Seconds an idle keep-alive connection stays open, in both servers (uvicorn's worker takes gunicorn's setting,
# whose default is 2). A client that sends on a connection as the server closes it gets a reset and no answer.
# Clients drop idle connections after a time of their own (nginx's upstream pool in deploy/: 1 s), which must be
# the shorter. At 2 s, a load client dropping them at 1 s, whose loop stalled on a loaded machine, met that reset
# on 3 of 143,987 webhooks (benchmarks/RESULTS.md).
keepalive = env_int("WEB_KEEPALIVE_SECONDS", 5, minimum=1)
reuse_port = True
# gunicorn's control socket defaults to one path per user (~/.gunicorn/gunicorn.ctl): every gunicorn of
# the user (web and hooks processes, parallel test runs) would fight over it, and nothing here uses it.
control_socket_disable = True
# Its error and access handlers redact URL keys (edge/logs.py): the access log carries the raw request line.
logger_class = "edge.logs.GunicornLogger"


def pre_request(worker, req) -> None:
    # Where Django's handler can ask for the connection to close after its answer (edge/handler.py): in the
    # threaded worker, which calls this in the thread that then runs the application. The hooks process's worker
    # decides that itself (overrides/uvicorn_protocol.py).
    from gunicorn.workers.gthread import ThreadWorker

    if isinstance(worker, ThreadWorker):
        from edge import handler

        handler.serving.request = req


def worker_exit(server, worker) -> None:
    # In the worker, as it ends. Should a hooks worker end without its lifespan's shutdown, the ids its writer
    # committed since its last message would wait for the sweeper: they go to the broker now.
    intake = sys.modules.get("hooks.intake")
    if intake is not None and intake.writer.unsent:  # a web process's writer never has any
        intake.writer.stop()


def on_starting(server) -> None:
    server.log.error_log.addFilter(_ListeningAddresses(server.cfg.address))
    if env_bool("DEBUG", False):
        # Settings check WEB_BIND and HOOKS_BIND; the address gunicorn really binds may come from --bind.
        for address in server.cfg.address:
            if isinstance(address, tuple) and not is_loopback_bind(address[0]):
                raise SystemExit(
                    f"DEBUG is on and {address[0]}:{address[1]} accepts connections from other machines: "
                    "bind to 127.0.0.1, or set DEBUG=0 and SECRET_KEY"
                )
    if server.master_pid:  # a re-executed master (USR2) starts beside its parent's listeners on purpose
        return
    for address in server.cfg.address:
        _refuse_if_listening(address)


def _refuse_if_listening(address) -> None:
    """Exit if something already listens on this TCP address; unix sockets and fds are left to gunicorn."""
    if isinstance(address, tuple) and is_listening(address):
        raise SystemExit(f"{address[0]}:{address[1]} is already in use; stop what listens there first")


class _ListeningAddresses(logging.Filter):
    """Names the addresses in gunicorn's `Listening at:` line, which reuse_port leaves empty.

    With reuse_port each worker binds its own socket as it boots and the master
    holds none, so gunicorn printed `Listening at:  (pid)`.
    """

    def __init__(self, addresses):
        super().__init__()
        self.addresses = ",".join(_url(address) for address in addresses)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg.startswith("Listening at:") and record.args and record.args[0] == "":
            record.args = (f"{self.addresses} (a socket per worker)", *record.args[1:])
        return True


def _url(address) -> str:
    if isinstance(address, tuple):
        host = f"[{address[0]}]" if ":" in address[0] else address[0]
        return f"http://{host}:{address[1]}"
    return f"unix:{address}"
