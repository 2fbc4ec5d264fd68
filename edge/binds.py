"""Whether an address to listen on is taken, and `make run`'s check of WEB_BIND and HOOKS_BIND before it migrates."""

import errno
import socket
import sys

from config.env import env_str

# make run's two listening addresses and their defaults (the Makefile's too).
BINDS = (("WEB_BIND", "127.0.0.1:8000"), ("HOOKS_BIND", "127.0.0.1:8001"))


def is_listening(address: tuple[str, int]) -> bool:
    """Whether something already listens on this TCP address."""
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        # SO_REUSEADDR lets a port in TIME_WAIT pass; a listening socket still refuses the bind.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(address)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return True
        raise
    finally:
        probe.close()
    return False


def taken_binds() -> list[str]:
    """A sentence for each of WEB_BIND and HOOKS_BIND that something already listens on."""
    from gunicorn.util import parse_address

    taken = []
    for name, default in BINDS:
        for bind in env_str(name, default).split(","):
            address = parse_address(bind.strip())
            if isinstance(address, tuple) and is_listening(address):
                host, port = address
                taken.append(
                    f"{bind.strip()} is in use ({name}): another make run? Stop it (Ctrl-C in its terminal), "
                    f"or give this one free ports: make run {name}={host}:{port + 100}"
                )
    return taken


def main() -> int:
    taken = taken_binds()
    for sentence in taken:
        print(sentence, file=sys.stderr)
    return 1 if taken else 0


if __name__ == "__main__":
    sys.exit(main())
