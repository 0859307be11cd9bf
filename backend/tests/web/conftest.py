"""A real HTTP/1.1 server on a free 127.0.0.1 port, driven by per-test route handlers."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import pytest


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)


Writer = asyncio.StreamWriter
Handler = Callable[[Request, Writer], Awaitable[None]]


async def respond(
    writer: Writer,
    status: int = 200,
    body: bytes | str = b"",
    headers: dict[str, str] | None = None,
) -> None:
    data = body.encode() if isinstance(body, str) else body
    head = {"Content-Length": str(len(data)), "Connection": "close", **(headers or {})}
    lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in head.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
    await writer.drain()


@dataclass
class LocalServer:
    port: int = 0
    routes: dict[str, Handler] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    # Connections being served: a handler still waiting when the test ends (a client that
    # timed out on a slow route) is cancelled and its socket closed at teardown, instead of
    # being left to the garbage collector (an unclosed-transport warning in a later test).
    serving: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def route(self, path: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            self.routes[path] = fn
            return fn

        return register

    async def handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.serving.add(task)
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
            first, *header_lines = raw.decode("latin-1").split("\r\n")
            method, target, _ = first.split(" ", 2)
            headers = {}
            for line in header_lines:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            parts = urlsplit(target)
            request = Request(method, parts.path, parse_qs(parts.query), headers, body)
            self.requests.append(request)
            handler = self.routes.get(parts.path)
            if handler is None:
                await respond(writer, 404, "not found")
            else:
                await handler(request, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.serving.discard(task)
            with contextlib.suppress(Exception):
                writer.transport.abort() if task.cancelling() else writer.close()

    async def stop(self) -> None:
        """End every connection still being served."""
        for task in list(self.serving):
            task.cancel()
        await asyncio.gather(*self.serving, return_exceptions=True)


@pytest.fixture
async def server() -> AsyncIterator[LocalServer]:
    srv = LocalServer()
    tcp = await asyncio.start_server(srv.handle, "127.0.0.1", 0)
    srv.port = tcp.sockets[0].getsockname()[1]
    async with tcp:
        yield srv
        tcp.close()
        await srv.stop()
