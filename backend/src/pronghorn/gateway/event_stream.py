"""The response of an SSE endpoint: the body's chunks as they come, a heartbeat comment
while it is idle, an end when the body ends.

Pure ASGI and lean, because a gateway holds thousands of these open: one task pumps the
body into `send`, one waits for the client's disconnect, and the request's own task sends
the heartbeats and watches both (no task group, no cancel scope or lock per send). A client
that leaves, or a server that stops (`ServerExit`), cancels the pump, which closes the body:
its `finally` sees the stream cut short. On a stop the response is left unfinished, so the
client sees the connection drop and can resume with `Last-Event-ID`, not a clean end.
Heartbeats and frames are whole ASGI messages, so their order may interleave but a frame is
never split.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from pronghorn.gateway.server_exit import server_exit_of

HEARTBEAT = b": heartbeat\r\n\r\n"
END: Message = {"type": "http.response.body", "body": b"", "more_body": False}


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class EventStreamResponse(Response):
    media_type = "text/event-stream"

    def __init__(
        self,
        body: AsyncGenerator[bytes, None],
        *,
        heartbeat_s: float,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.body_iterator = body
        self.heartbeat_s = heartbeat_s
        self.status_code = 200
        self.background = None
        given = (headers or {}).items()
        head = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in given]
        if not any(k == b"cache-control" for k, _ in head):
            head.append((b"cache-control", b"no-store"))
        head += [
            (b"connection", b"keep-alive"),
            (b"x-accel-buffering", b"no"),  # nginx: do not buffer the stream
            (b"content-type", b"text/event-stream; charset=utf-8"),
        ]
        self.raw_headers = head

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        if scope.get("method") == "HEAD":  # headers only: a stream would never end
            await self.body_iterator.aclose()
            await send(END)
            return
        pump = asyncio.ensure_future(self._pump(send))
        listener = asyncio.ensure_future(_until_disconnect(receive))
        stopped = asyncio.get_running_loop().create_future()

        def on_stop() -> None:
            if not stopped.done():
                stopped.set_result(None)

        server_exit = server_exit_of(scope)
        if server_exit is not None:
            server_exit.subscribe(on_stop)
        try:
            while True:
                done, _ = await asyncio.wait(
                    (pump, listener, stopped),
                    timeout=self.heartbeat_s,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if pump in done:
                    pump.result()  # the body's own error, if it failed
                    await send(END)
                    return
                if listener in done:  # the client left
                    listener.exception()  # (a failed receive ends the stream too)
                    return
                if done:  # the server is stopping
                    return
                await send({"type": "http.response.body", "body": HEARTBEAT, "more_body": True})
        finally:
            if server_exit is not None:
                server_exit.unsubscribe(on_stop)
            listener.cancel()
            if not pump.done():
                pump.cancel()
                await asyncio.wait((pump,))  # its body's cleanup runs before the answer ends

    async def _pump(self, send: Send) -> None:
        try:
            async for chunk in self.body_iterator:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            # Cancelled while sending, the body waits at its `yield`: close it now, not
            # when the collector finds it.
            await self.body_iterator.aclose()
