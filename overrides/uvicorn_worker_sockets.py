"""uvicorn's gunicorn worker, handed the listening sockets themselves rather than gunicorn's wrappers of them.

The event loop closes a listening socket as its server closes; handed
gunicorn's wrapper, whose close() uvicorn then calls, every stop logged
"Error while closing socket [Errno 9] Bad file descriptor". UvicornWorker
passes `self.sockets` to its server in `_serve`, private, with no setting
between: the wrappers are swapped for their `sock` (gunicorn's BaseSocket
keeps the socket there) just before.
"""

from uvicorn_worker import UvicornWorker

WRITTEN_FOR = {"uvicorn-worker": "0.4.0", "gunicorn": "27.0.1"}


class UnwrappedSocketsWorker(UvicornWorker):
    async def _serve(self) -> None:
        self.sockets = [getattr(listener, "sock", listener) for listener in self.sockets]
        await super()._serve()
