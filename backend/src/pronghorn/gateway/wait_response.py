"""The answer of `runs.wait` and `join`: the run's output once it is done.

A run that finishes within the first heartbeat interval (most do) is answered as one plain
JSON body with a `Content-Length` — one response head and one body write, no chunked
framing, no task group. A run still going after that interval turns the answer into a
stream, as before: the head goes out, then a newline every heartbeat (JSON ignores the
whitespace; proxies see bytes), then the output. A client that goes away while the run is
going calls `on_disconnect` (the run is cancelled when it asked for
`on_disconnect: cancel`).

Pure ASGI: the only task it starts is the one listening for the client's disconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from pronghorn.runtime.engine.remote_run import RunResult
from pronghorn.runtime.events.serialization import dumps


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class RunOutputResponse(Response):
    media_type = "application/json"

    def __init__(
        self,
        job: RunResult,
        *,
        heartbeat_s: float,
        headers: dict[str, str],
        on_disconnect: Callable[[], None] | None = None,
    ) -> None:
        self.job = job
        self.heartbeat_s = heartbeat_s
        self.on_disconnect = on_disconnect
        self.status_code = 200
        self.background = None
        self.body = b""
        self.extra = [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()
        ]
        self.raw_headers = self._head(None)

    def _head(self, length: int | None) -> list[tuple[bytes, bytes]]:
        head = [(b"content-type", b"application/json"), *self.extra]
        if length is not None:
            head.append((b"content-length", str(length).encode()))
        return head

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        done = self.job.done
        if done.is_set():
            await self._whole(send)
            return
        listener = asyncio.ensure_future(_until_disconnect(receive))
        waiter = asyncio.ensure_future(done.wait())
        streaming = answered = False
        try:
            while True:
                finished, _ = await asyncio.wait(
                    (waiter, listener),
                    timeout=self.heartbeat_s,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if waiter in finished:
                    break
                if listener in finished:  # the client went away before the run ended
                    return
                if not streaming:
                    streaming = True
                    await send(
                        {"type": "http.response.start", "status": 200, "headers": self._head(None)}
                    )
                await send({"type": "http.response.body", "body": b"\n", "more_body": True})
            if streaming:
                body = dumps(self.job.output)
                await send({"type": "http.response.body", "body": body, "more_body": False})
            else:
                await self._whole(send)
            answered = True
        finally:
            if not answered and self.on_disconnect is not None:
                self.on_disconnect()  # gone, or the server is stopping
            for task in (waiter, listener):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(waiter, listener, return_exceptions=True)

    async def _whole(self, send: Send) -> None:
        body = dumps(self.job.output)
        await send({"type": "http.response.start", "status": 200, "headers": self._head(len(body))})
        await send({"type": "http.response.body", "body": body})
