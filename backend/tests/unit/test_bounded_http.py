"""The httptools protocol `pronghorn serve` runs: a request head that keeps coming past
`server.max_header_bytes` gets 431 and a closed connection; a normal head is served."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from pronghorn.gateway.bounded_http import BoundedHttpToolsProtocol


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 2026)}.get(name, default)


def connect(
    max_head: int, served: asyncio.Event | None = None
) -> tuple[BoundedHttpToolsProtocol, FakeTransport]:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        if served is not None:
            served.set()

    config = Config(app=app, h11_max_incomplete_event_size=max_head, lifespan="off")
    protocol = BoundedHttpToolsProtocol(config, ServerState(), {}, asyncio.get_running_loop())
    transport = FakeTransport()
    protocol.connection_made(transport)
    return protocol, transport


async def test_a_head_that_keeps_coming_gets_431() -> None:
    protocol, transport = connect(4096)
    protocol.data_received(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ")
    for _ in range(3):  # 3 KiB so far: still within the bound
        protocol.data_received(b"a" * 1024)
    assert not transport.closed and transport.written == b""
    protocol.data_received(b"a" * 2048)  # now past it, and the head has not ended
    assert transport.written.startswith(b"HTTP/1.1 431 ")
    assert transport.closed


async def test_a_normal_request_and_its_body_are_served() -> None:
    served = asyncio.Event()
    protocol, transport = connect(4096, served)
    body = b"x" * 10_000  # a body larger than the head bound is not counted as head
    protocol.data_received(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n" + body[:3000]
    )
    protocol.data_received(body[3000:])
    await asyncio.wait_for(served.wait(), 30)
    assert transport.written.startswith(b"HTTP/1.1 200 ")
    assert not transport.closed
