"""The uvicorn thread the fakes run on: `stop()` ends it even when a response never ends."""

from __future__ import annotations

import asyncio

import httpx
from starlette.types import Receive, Scope, Send

from support.threaded_server import ThreadedServer


async def _endless(scope: Scope, receive: Receive, send: Send) -> None:
    """A stream that never ends and never looks for the client leaving (as a stalled fake)."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    while True:
        await send({"type": "http.response.body", "body": b"x", "more_body": True})
        await asyncio.sleep(0.05)


def test_stop_ends_a_server_stuck_on_an_endless_response() -> None:
    server = ThreadedServer(_endless, name="endless server").start()
    with (
        httpx.Client(timeout=10) as client,
        client.stream("GET", f"http://127.0.0.1:{server.port}/") as response,
    ):
        next(response.iter_raw())  # the response is under way
        server.stop(join_timeout_s=0.5)  # a graceful stop would wait for it forever
    assert not server.running
