"""Refuse requests addressed to a host name the server does not answer to (DNS rebinding).

A page on ``attacker.example`` whose DNS name is re-pointed at 127.0.0.1 makes the browser
send ``Host: attacker.example`` to a local gateway; answering it would let that page drive
the gateway with the browser's full same-origin rights. Loopback names are always served
(a rebinding page cannot make the browser send them), so are the names in
``server.allowed_hosts``; anything else gets 400. ``/health`` and ``/ready`` answer for any
host: probes address the server by whatever IP they see, and those routes reveal nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from pronghorn.config.hosts import LOOPBACK_NAMES, HostPatterns, normalize_host
from pronghorn.gateway.responses import JSONResponse

PROBE_PATHS = frozenset({"/health", "/ready"})


def header(scope: Scope, name: bytes) -> str | None:
    """The first value of a request header (latin-1, as HTTP defines it), or None."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


class HostGuardMiddleware:
    def __init__(self, app: ASGIApp, *, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.loopback = HostPatterns(LOOPBACK_NAMES)
        self.allowed = HostPatterns(allowed_hosts)

    def allows(self, host: str) -> bool:
        return self.loopback.match(host) or self.allowed.match(host)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.allowed.any:
            await self.app(scope, receive, send)
            return
        raw = header(scope, b"host")
        host = normalize_host(raw) if raw is not None else None
        if (host is not None and self.allows(host)) or scope.get("path") in PROBE_PATHS:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        detail = (
            "Missing Host header."
            if raw is None
            else f"Host {raw[:100]!r} is not served here: add it to server.allowed_hosts."
        )
        await JSONResponse({"detail": detail}, status_code=400)(scope, receive, send)
