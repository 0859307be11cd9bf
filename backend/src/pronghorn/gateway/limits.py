"""Caps on what one request may make the server hold: header count and size, body size.

The HTTP parser bounds the request line plus headers while they arrive
(``server.max_header_bytes``, set on uvicorn by ``pronghorn serve``). Here a request with
more than ``server.max_header_count`` headers, or headers larger together than
``server.max_header_bytes`` (one read can bring a whole head past the parser), gets 431;
a body larger than ``server.max_body_bytes`` gets 413 — at once when ``Content-Length``
says so, else (a chunked body) as soon as the streamed bytes pass the cap, so the body is
never read whole; only a chunked body is counted. The uploads route streams to disk under
its own limits (``uploads.*``) and is not capped here. A request with both
``Content-Length`` and ``Transfer-Encoding`` is refused (400, connection closed): a proxy
in front could frame it the other way.
"""

from __future__ import annotations

import re

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pronghorn.gateway.host_guard import header
from pronghorn.gateway.responses import JSONResponse

UNCAPPED_PATHS = re.compile(r"^/api/threads/[^/]+/uploads/?$")


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"Request body is larger than the limit of {limit} bytes.")


class RequestLimitsMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        max_header_bytes: int,
        max_header_count: int,
    ) -> None:
        self.app = app
        self.max_body = max_body_bytes
        self.max_header_bytes = max_header_bytes
        self.max_headers = max_header_count

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        detail = self._header_problem(scope)
        if detail is not None:
            await JSONResponse({"detail": detail}, status_code=431)(scope, receive, send)
            return
        length = header(scope, b"content-length")
        chunked = header(scope, b"transfer-encoding") is not None
        if length is not None and chunked:
            # Two framings: a proxy in front may pick the other one (request smuggling).
            refused = JSONResponse(
                {
                    "detail": "Content-Length and Transfer-Encoding together are ambiguous; "
                    "send one of them."
                },
                status_code=400,
                headers={"Connection": "close"},
            )
            await refused(scope, receive, send)
            return
        if UNCAPPED_PATHS.match(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        if length is not None and (not length.strip().isdigit() or int(length) > self.max_body):
            status, detail = (
                (413, BodyTooLarge(self.max_body).detail)
                if length.strip().isdigit()
                else (400, "Invalid Content-Length header.")
            )
            response = JSONResponse({"detail": detail}, status_code=status)
            await response(scope, receive, send)
            return
        if not chunked:
            # The body is framed by its Content-Length (checked above) or empty: the HTTP
            # server delivers no more than that, so there is nothing to count.
            await self.app(scope, receive, send)
            return
        await self._counted(scope, receive, send)

    def _header_problem(self, scope: Scope) -> str | None:
        headers = scope.get("headers", ())
        if len(headers) > self.max_headers:
            return f"Too many request headers (the limit is {self.max_headers})."
        # the parser cuts a head that arrives in pieces; one read can hold more than the cap
        size = len(scope.get("raw_path") or b"") + sum(len(k) + len(v) + 4 for k, v in headers)
        if size > self.max_header_bytes:
            return f"Request headers are too large (the limit is {self.max_header_bytes} bytes)."
        return None

    async def _counted(self, scope: Scope, receive: Receive, send: Send) -> None:
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise BodyTooLarge(self.max_body)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLarge as exc:
            if started:
                raise
            response = JSONResponse({"detail": exc.detail}, status_code=413)
            await response(scope, receive, send)
