"""Refuse state-changing requests sent by another site's page (cross-site request forgery).

Browsers say where a request comes from: ``Origin`` on every POST/PUT/PATCH/DELETE (and
``Referer``/``Sec-Fetch-Site`` too); SDKs, curl and IM bots send none of these and pass. A
browser request passes when its origin is this server's own (its host and port equal the
``Host`` the request was sent to, whatever the scheme, so a TLS-terminating proxy in front
works), is listed in ``server.cors_origins``, or has a host listed in
``server.allowed_hosts``. Anything else gets 403, before the route reads the body, so a
cross-site form upload writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from pronghorn.config.hosts import HostPatterns, normalize_host
from pronghorn.gateway.host_guard import header
from pronghorn.gateway.responses import JSONResponse

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an absolute http(s) URL, lower case; None otherwise."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or "@" in parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


def _port(netloc: str) -> int | None:
    tail = netloc.rpartition("]")[2] if netloc.startswith("[") else netloc
    _, sep, port = tail.rpartition(":")
    return int(port) if sep and port.isdigit() else None


def _same_host(scheme: str, netloc: str, host: str) -> bool:
    """Does the origin ``scheme://netloc`` name the host:port the request was sent to? A
    ``Host`` without a port matches the default ports (the scheme a proxy in front of us
    speaks is unknown here)."""
    if normalize_host(netloc) != normalize_host(host):
        return False
    origin_port = _port(netloc) or (443 if scheme == "https" else 80)
    host_port = _port(host.strip())
    return origin_port == host_port or (host_port is None and origin_port in (80, 443))


class OriginGuardMiddleware:
    def __init__(
        self, app: ASGIApp, *, cors_origins: Iterable[str], allowed_hosts: Iterable[str]
    ) -> None:
        self.app = app
        origins = [o.strip().rstrip("/").lower() for o in cors_origins]
        self.any_origin = "*" in origins
        self.origins = frozenset(origins)
        patterns = HostPatterns(allowed_hosts)
        self.hosts = patterns if not patterns.any else HostPatterns(())

    def trusted(self, origin: str, host: str | None) -> bool:
        if self.any_origin or origin in self.origins:
            return True
        scheme, _, netloc = origin.partition("://")
        name = normalize_host(netloc)
        if name is None:
            return False
        if host is not None and _same_host(scheme, netloc, host):
            return True
        return self.hosts.match(name)

    def refusal(self, scope: Scope) -> str | None:
        """Why this request is refused, or None to let it through."""
        host = header(scope, b"host")
        for name in (b"origin", b"referer"):
            value = header(scope, name)
            if value is None:
                continue
            origin = origin_of(value)
            if origin is not None and self.trusted(origin, host):
                return None
            shown = origin or value[:100]
            return (
                f"Cross-site request refused: {name.decode()} {shown!r} is not this server; "
                "add the origin to server.cors_origins to allow it."
            )
        if (header(scope, b"sec-fetch-site") or "").strip().lower() == "cross-site":
            return "Cross-site request refused (Sec-Fetch-Site: cross-site, no Origin)."
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in UNSAFE_METHODS:
            detail = self.refusal(scope)
            if detail is not None:
                await JSONResponse({"detail": detail}, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
