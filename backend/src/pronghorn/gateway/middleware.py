"""Pure-ASGI middleware (no BaseHTTPMiddleware: it buffers and slows streaming)."""

from __future__ import annotations

import itertools
import os

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pronghorn.runtime.observability.log_context import request_id_var


class RequestIdMiddleware:
    """Takes `X-Request-ID` from the client or makes one; echoes it; puts it in the log context."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # A made id is 32 hex digits, as a uuid4's were: this process's random half, then a
        # counter (unique without a random draw per request).
        self._prefix = os.urandom(8).hex()
        self._serial = itertools.count(1)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = None
        for name, value in scope.get("headers", []):
            if name == b"x-request-id":
                candidate = value.decode("latin-1")[:64]
                if candidate.replace("-", "").isalnum():
                    rid = candidate
                break
        rid = rid or f"{self._prefix}{next(self._serial):016x}"
        token = request_id_var.set(rid)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", rid.encode()))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id_var.reset(token)
