"""httpx transports that call an ASGI app running on another thread's event loop, streaming.

``httpx.ASGITransport`` runs the app on the caller's loop and buffers the whole response, so
an SSE stream or a join never returns. These transports hand each request to the app's own
loop (see ``inproc.AppThread``) and feed the response to the client as the app sends it:

- the request body is sent as one ``http.request`` message;
- ``http.response.start`` and every ``http.response.body`` chunk reach the client as soon as
  the app sends them (a thread-safe hand-off, no buffering);
- closing the response (or the client giving up) delivers ``http.disconnect`` to the app, and
  so does the end of the response, as uvicorn does;
- an exception raised before the response started is raised in the client; after it started
  the stream just ends (what a real server's client would see).

The client side honours httpx's read timeout (``httpx.ReadTimeout``) like a socket would.
Async and sync clients both work, from any thread or loop, because the app never runs on the
caller's loop: a test that blocks its own loop (a sync ``httpx.Client`` in an async test)
cannot stall the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote

import httpx

Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]
# What the app side hands to the client: an ASGI message, the app's exception, or END.
Delivery = Message | BaseException | None
END: None = None


class AppHost(Protocol):
    """What a transport needs from the server: its loop, its app and per-request state."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...

    @property
    def app(self) -> ASGIApp: ...

    def request_state(self) -> dict[str, Any]:
        """A fresh copy of the lifespan state for one request (as uvicorn gives)."""
        ...

    def track(self, exchange: Exchange) -> None: ...

    def untrack(self, exchange: Exchange) -> None: ...


@dataclass(eq=False)  # identity: the server keeps a set of the open ones
class Exchange:
    """One request's ASGI call on the app loop; the client reads what it sends."""

    scope: Message
    body: bytes
    deliver: Callable[[Delivery], None]
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    async def run(self, app: ASGIApp) -> None:
        body_sent = False

        async def receive() -> Message:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": self.body, "more_body": False}
            await self.disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if self.disconnected.is_set():
                return  # the client is gone: like uvicorn, drop what is sent after
            self.deliver(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.disconnected.set()  # response complete: receive() now says disconnect

        try:
            await app(self.scope, receive, send)
        except BaseException as exc:
            self.deliver(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self.deliver(END)


def build_scope(request: httpx.Request, state: dict[str, Any]) -> Message:
    url = request.url
    port = url.port or (443 if url.scheme == "https" else 80)
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": url.scheme,
        "path": unquote(url.path),
        "raw_path": url.raw_path.split(b"?", 1)[0],
        "query_string": url.query,
        "root_path": "",
        "headers": [(k.lower(), v) for k, v in request.headers.raw],
        "client": ("127.0.0.1", 50000),
        "server": (url.host, port),
        "state": state,
    }


def _read_timeout(request: httpx.Request) -> float | None:
    timeouts = request.extensions.get("timeout") or {}
    value = timeouts.get("read")
    return float(value) if value is not None else None


def _start(host: AppHost, request: httpx.Request, body: bytes, deliver: Callable[[Delivery], None]):
    exchange = Exchange(build_scope(request, host.request_state()), body, deliver)

    def launch() -> None:
        exchange.task = host.loop.create_task(_serve(host, exchange))

    host.loop.call_soon_threadsafe(launch)
    return exchange


async def _serve(host: AppHost, exchange: Exchange) -> None:
    host.track(exchange)
    try:
        await exchange.run(host.app)
    finally:
        host.untrack(exchange)


def _disconnect(host: AppHost, exchange: Exchange) -> None:
    if not host.loop.is_closed():
        host.loop.call_soon_threadsafe(exchange.disconnected.set)


def _response(
    request: httpx.Request, first: Delivery, stream: httpx.SyncByteStream | httpx.AsyncByteStream
) -> httpx.Response:
    if isinstance(first, BaseException):
        raise first
    if first is None or first["type"] != "http.response.start":
        raise RuntimeError(f"the app answered {request.method} {request.url} with no response")
    headers = [(bytes(k), bytes(v)) for k, v in first.get("headers", [])]
    return httpx.Response(first["status"], headers=headers, stream=stream, request=request)


class _AsyncBody(httpx.AsyncByteStream):
    def __init__(
        self,
        host: AppHost,
        exchange: Exchange,
        inbox: asyncio.Queue[Delivery],
        timeout: float | None,
        request: httpx.Request,
    ) -> None:
        self._host, self._exchange, self._inbox = host, exchange, inbox
        self._timeout, self._request = timeout, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            try:
                item = await asyncio.wait_for(self._inbox.get(), self._timeout)
            except TimeoutError:
                raise httpx.ReadTimeout("no data from the app", request=self._request) from None
            if item is None or isinstance(item, BaseException):
                return  # the stream ended (an error after the start just cuts it, as on a socket)
            if item["type"] != "http.response.body":
                continue
            chunk = bytes(item.get("body", b""))
            if chunk:
                yield chunk
            if not item.get("more_body", False):
                return

    async def aclose(self) -> None:
        _disconnect(self._host, self._exchange)


class AsyncStreamingTransport(httpx.AsyncBaseTransport):
    def __init__(self, host: AppHost) -> None:
        self._host = host

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[Delivery] = asyncio.Queue()

        def deliver(item: Delivery) -> None:
            # RuntimeError: the client's loop is closed, so nobody is listening
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(inbox.put_nowait, item)

        exchange = _start(self._host, request, body, deliver)
        timeout = _read_timeout(request)
        try:
            try:
                first = await asyncio.wait_for(inbox.get(), timeout)
            except TimeoutError:
                raise httpx.ReadTimeout("no response from the app", request=request) from None
            stream = _AsyncBody(self._host, exchange, inbox, timeout, request)
            return _response(request, first, stream)
        except BaseException:
            _disconnect(self._host, exchange)
            raise


class _SyncBody(httpx.SyncByteStream):
    def __init__(
        self,
        host: AppHost,
        exchange: Exchange,
        inbox: queue.SimpleQueue[Delivery],
        timeout: float | None,
        request: httpx.Request,
    ) -> None:
        self._host, self._exchange, self._inbox = host, exchange, inbox
        self._timeout, self._request = timeout, request

    def __iter__(self) -> Iterator[bytes]:
        while True:
            try:
                item = self._inbox.get(timeout=self._timeout)
            except queue.Empty:
                raise httpx.ReadTimeout("no data from the app", request=self._request) from None
            if item is None or isinstance(item, BaseException):
                return
            if item["type"] != "http.response.body":
                continue
            chunk = bytes(item.get("body", b""))
            if chunk:
                yield chunk
            if not item.get("more_body", False):
                return

    def close(self) -> None:
        _disconnect(self._host, self._exchange)


class SyncStreamingTransport(httpx.BaseTransport):
    def __init__(self, host: AppHost) -> None:
        self._host = host

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        inbox: queue.SimpleQueue[Delivery] = queue.SimpleQueue()
        exchange = _start(self._host, request, body, inbox.put)
        timeout = _read_timeout(request)
        try:
            try:
                first = inbox.get(timeout=timeout)
            except queue.Empty:
                raise httpx.ReadTimeout("no response from the app", request=request) from None
            return _response(
                request, first, _SyncBody(self._host, exchange, inbox, timeout, request)
            )
        except BaseException:
            _disconnect(self._host, exchange)
            raise


def raw_request(
    host: AppHost, method: str, target: str, headers: list[tuple[bytes, bytes]], timeout: float
) -> tuple[int, bytes]:
    """Send a request target byte for byte (clients normalise ``..`` away) and read the
    whole answer. The path is derived as uvicorn derives it: the raw path, percent-decoded."""
    raw_path, _, query = target.encode("ascii").partition(b"?")
    scope: Message = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": unquote(raw_path.decode("ascii")),
        "raw_path": raw_path,
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"localhost"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("localhost", 80),
        "state": host.request_state(),
    }
    inbox: queue.SimpleQueue[Delivery] = queue.SimpleQueue()
    exchange = Exchange(scope, b"", inbox.put)
    host.loop.call_soon_threadsafe(lambda: host.loop.create_task(_serve(host, exchange)))
    status, body = 0, b""
    while (item := inbox.get(timeout=timeout)) is not None:  # None: END
        if isinstance(item, BaseException):
            raise item
        if item["type"] == "http.response.start":
            status = int(item["status"])
        elif item["type"] == "http.response.body":
            body += bytes(item.get("body", b""))
    return status, body
