"""The Redis proxy that the outage tests cut: `stop()` drops every connection, including
one that arrived while the proxy was still connecting to its target."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from support.redis_kit import RedisProxy


@pytest.fixture
def stalled_target() -> Iterator[str]:
    """A TCP address whose handshakes stall: a listener that never accepts, its accept
    queue already full, so the kernel drops further SYNs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(2):  # Linux queues backlog + 1 connections
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        for sock in (*fillers, listener):
            sock.close()


async def test_stop_drops_a_connection_still_waiting_for_its_target(stalled_target: str) -> None:
    proxy = RedisProxy(stalled_target)
    await proxy.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    try:
        for _ in range(1000):  # until the proxy holds the connection and dials its target
            if proxy.connections():
                break
            await asyncio.sleep(0.01)
        assert proxy.connections() == 1, "the proxy does not hold a connection while it dials"
        await proxy.stop()
        assert await asyncio.wait_for(reader.read(), timeout=10) == b""  # dropped, not kept
        assert proxy.connections() == 0
    finally:
        writer.close()
        await proxy.stop()


async def test_stop_drops_a_proxied_connection_and_start_listens_again() -> None:
    upstream = await asyncio.start_server(_echo, "127.0.0.1", 0)
    proxy = RedisProxy(f"redis://127.0.0.1:{upstream.sockets[0].getsockname()[1]}/0")
    await proxy.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        writer.write(b"ping")
        assert await asyncio.wait_for(reader.readexactly(4), timeout=10) == b"ping"
        await proxy.stop()
        assert await asyncio.wait_for(reader.read(), timeout=10) == b""
        assert proxy.connections() == 0
        writer.close()
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", proxy.port)
        await proxy.start()  # the same port again
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        writer.write(b"back")
        assert await asyncio.wait_for(reader.readexactly(4), timeout=10) == b"back"
        writer.close()
    finally:
        await proxy.stop()
        upstream.close()


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()
