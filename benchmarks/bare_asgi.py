"""An ASGI application that reads each request's body and answers 200, storing nothing: the hooks process's
server (edge/asgi_worker.py, under gunicorn's master) with none of Flowgate's work, for benchmarks/peers.py.

Beside Node-RED's http-in node it shows what the server and the interpreter cost; beside the hooks process, what
storing a webhook before its 200 costs.
"""

HEADERS = [(b"content-type", b"text/plain"), (b"content-length", b"2")]


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": b"OK"})
