"""Authenticate every API request before it reaches a route.

The runtime's authenticator (`auth.mode`) turns the request's credentials into a
`Principal`, stored in the request state (`deps.get_principal` reads it). Probes, the login
and setup endpoints, the docs and the web UI's static files are public; everything else
under `/api/` is not. A failure answers 401 (or what the authenticator says, e.g. 403 for a
missing CSRF token, 429 with `Retry-After` when rate-limited) before any route runs.
"""

from __future__ import annotations

import math
from http.cookies import SimpleCookie

from starlette.types import ASGIApp, Receive, Scope, Send

from pronghorn.auth.authenticator import AuthError, Credentials
from pronghorn.auth.proxies import TrustedProxies
from pronghorn.gateway.protocols.openai_errors import error_body
from pronghorn.gateway.responses import JSONResponse

# Exact public paths, and public prefixes (under /api/ everything else is protected).
PUBLIC_PATHS = frozenset(
    {
        "/api/auth/login",
        "/api/auth/setup",
        "/api/auth/config",
        # DeerFlow's login screens (gateway/routers/deerflow_auth.py)
        "/api/v1/auth/login/local",
        "/api/v1/auth/logout",
        "/api/v1/auth/register",
        "/api/v1/auth/initialize",
        "/api/v1/auth/setup-status",
        "/api/v1/auth/providers",
        "/api/langgraph/openapi.json",
        "/api/langgraph/docs",
        "/api/langgraph/ok",
        "/api/channels/slack/events",  # Slack calls it; every request is signature-checked
        "/api/channels/feishu/events",  # Feishu calls it; token (and signature) checked
        "/api/channels/wecom/callback",  # WeCom calls it; every request is signature-checked
    }
)
PUBLIC_PREFIXES = ("/api/auth/oidc/",)
# Outside /api/, protected too: the OpenAI-compatible API (its errors are OpenAI-shaped).
OPENAI_PREFIX = "/v1/"


def is_protected(path: str) -> bool:
    if path.startswith(OPENAI_PREFIX):
        return True
    if not path.startswith("/api/") or path in PUBLIC_PATHS:
        return False
    return not path.startswith(PUBLIC_PREFIXES)


def error_content(path: str, status: int, detail: str) -> dict[str, object]:
    if path.startswith(OPENAI_PREFIX):
        return error_body(status, detail)
    return {"detail": detail}


def credentials_of(scope: Scope, proxies: TrustedProxies | None = None) -> Credentials:
    headers: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    cookies: dict[str, str] = {}
    if raw := headers.get("cookie"):
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(raw)
        except Exception:  # a malformed Cookie header authenticates nothing
            jar = SimpleCookie()
        cookies = {name: morsel.value for name, morsel in jar.items()}
    client = scope.get("client")
    peer: str | None = client[0] if client else None
    client_ip = proxies.client_ip(peer, headers.get("x-forwarded-for")) if proxies else peer
    return Credentials(
        method=scope["method"],
        path=scope["path"],
        headers=headers,
        cookies=cookies,
        client_ip=client_ip,
        query_string=scope.get("query_string", b"").decode("latin-1"),
        scope=scope,
    )


class AuthMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_protected(scope["path"]):
            await self.app(scope, receive, send)
            return
        runtime = scope["app"].state.runtime
        try:
            credentials = credentials_of(scope, runtime.auth.proxies)
            principal = await runtime.authenticator.authenticate(credentials)
        except AuthError as exc:
            headers = dict(exc.headers)
            if exc.retry_after_s is not None:
                headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
            if exc.status == 401:
                headers.setdefault("WWW-Authenticate", "Bearer")
            content = error_content(scope["path"], exc.status, exc.detail)
            response = JSONResponse(content, status_code=exc.status, headers=headers)
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)
