"""OAuth 2 bearer tokens for http/sse MCP servers: client-credentials or refresh-token grant.

A :class:`TokenSource` fetches a token from the server's ``token_url``, keeps it until
``refresh_skew_s`` before it expires, and fetches a new one under a lock (concurrent
requests share one fetch). :class:`BearerAuth` is the ``httpx.Auth`` the MCP transports
use: every request carries the current token, and a 401 refreshes it once and retries.
A rotated refresh token (some servers return a new one) replaces the configured one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from typing import cast

import httpx

from pronghorn.config.schema.mcp import McpOAuthConfig
from pronghorn.mcp.errors import McpAuthError

DEFAULT_EXPIRY_S = 3600.0


class TokenSource:
    def __init__(
        self,
        config: McpOAuthConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.config = config
        self._clock = clock
        self._transport = transport
        self._token: str | None = None
        self._token_type = "Bearer"
        self._expires_at = 0.0
        self._refresh_token = (
            config.refresh_token.get_secret_value() if config.refresh_token else None
        )
        self._lock = asyncio.Lock()
        self.fetches = 0

    def _fresh(self) -> bool:
        return self._token is not None and self._clock() < self._expires_at

    async def header(self, *, force: bool = False) -> str:
        """``<type> <token>``, fetching a new token when the cached one is (nearly) expired."""
        if not force and self._fresh():
            return f"{self._token_type} {self._token}"
        async with self._lock:
            if force or not self._fresh():
                await self._fetch()
        return f"{self._token_type} {self._token}"

    def invalidate(self) -> None:
        self._expires_at = 0.0

    def _form(self) -> dict[str, str]:
        cfg = self.config
        form: dict[str, str] = {"grant_type": cfg.grant_type}
        if cfg.grant_type == "refresh_token" and self._refresh_token:
            form["refresh_token"] = self._refresh_token
        if cfg.client_id:
            form["client_id"] = cfg.client_id
        if cfg.client_secret is not None:
            form["client_secret"] = cfg.client_secret.get_secret_value()
        if cfg.scope:
            form["scope"] = cfg.scope
        if cfg.audience:
            form["audience"] = cfg.audience
        return form

    async def _fetch(self) -> None:
        cfg = self.config
        started = self._clock()
        try:
            async with httpx.AsyncClient(
                timeout=cfg.timeout_s, transport=self._transport, follow_redirects=False
            ) as client:
                response = await client.post(
                    cfg.token_url, data=self._form(), headers={"Accept": "application/json"}
                )
        except httpx.HTTPError as exc:
            raise McpAuthError(f"token request to {cfg.token_url} failed: {exc!r}") from None
        if response.status_code != 200:
            raise McpAuthError(
                f"token endpoint {cfg.token_url} answered {response.status_code}: "
                f"{response.text[:200]}"
            )
        try:
            body: object = response.json()
        except ValueError:
            raise McpAuthError(f"token endpoint {cfg.token_url} sent no JSON") from None
        fields = cast("dict[str, object]", body) if isinstance(body, dict) else {}
        token = fields.get("access_token")
        if not isinstance(token, str) or not token:
            raise McpAuthError(f"token endpoint {cfg.token_url} sent no access_token")
        expires_in = fields.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, int | float) else DEFAULT_EXPIRY_S
        token_type = fields.get("token_type")
        rotated = fields.get("refresh_token")
        if isinstance(rotated, str) and rotated:
            self._refresh_token = rotated
        self._token = token
        self._token_type = (
            "Bearer"
            if not isinstance(token_type, str) or token_type.lower() == "bearer"
            else token_type
        )
        self._expires_at = started + max(0.0, lifetime - cfg.refresh_skew_s)
        self.fetches += 1


class BearerAuth(httpx.Auth):
    """Adds the token to every request; on a 401 refreshes it once and retries."""

    def __init__(self, source: TokenSource) -> None:
        self.source = source

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = await self.source.header()
        response = yield request
        if response.status_code == 401:
            request.headers["Authorization"] = await self.source.header(force=True)
            yield request
