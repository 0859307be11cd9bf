"""The `pronghorn_session` cookie on a response, and who the client is (behind proxies)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import Request, Response

from pronghorn.auth.sessions import COOKIE_NAME, DEFAULT_TTL
from pronghorn.runtime.wiring.app_runtime import AppRuntime


def _runtime(request: Request) -> AppRuntime:
    return request.app.state.runtime


def client_ip(request: Request) -> str | None:
    """The client's address (X-Forwarded-For only from `auth.trusted_proxies`)."""
    peer = request.client.host if request.client else None
    return _runtime(request).auth.proxies.client_ip(peer, request.headers.get("x-forwarded-for"))


def is_https(request: Request) -> bool:
    peer = request.client.host if request.client else None
    proto = request.headers.get("x-forwarded-proto")
    return _runtime(request).auth.proxies.is_https(request.url.scheme, peer, proto)


def set_session_cookie(response: Response, cookie_value: str, request: Request) -> None:
    """HttpOnly, SameSite=Lax, Path=/, Secure when the client came over https."""
    runtime = getattr(request.app.state, "runtime", None)
    ttl: timedelta = runtime.auth.session_ttl if runtime is not None else DEFAULT_TTL
    response.set_cookie(
        COOKIE_NAME,
        cookie_value,
        max_age=int(ttl.total_seconds()),
        path="/",
        httponly=True,
        samesite="lax",
        secure=is_https(request),
    )


def clear_session_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(
        COOKIE_NAME, path="/", httponly=True, samesite="lax", secure=is_https(request)
    )
