"""The app's `tenant_access_token` (self-built app): fetched from
`/open-apis/auth/v3/tenant_access_token/internal`, cached, refreshed ahead of its expiry
and at once when the platform says it is invalid (`invalidate`). One fetch at a time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx

from pronghorn.channels.errors import PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
# Business codes meaning "this access token is missing, invalid or expired".
TOKEN_INVALID_CODES = frozenset({99991661, 99991663, 99991677})
_DEFAULT_TTL_S = 7200.0
_EARLY_S = 600.0  # refresh this long before the announced expiry (at most half the TTL)


class TenantToken:
    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        app_id: str,
        app_secret: str,
        backoff: Backoff,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._url = base_url.rstrip("/") + TOKEN_PATH
        self._app_id, self._app_secret = app_id, app_secret
        self._backoff = backoff
        self._clock = clock
        self._token: str | None = None
        self._refresh_at = 0.0
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def get(self) -> str:
        token = self._token
        if token is not None and self._clock() < self._refresh_at:
            return token
        async with self._lock:
            if self._token is not None and self._clock() < self._refresh_at:
                return self._token
            return await self._fetch()

    def invalidate(self, token: str) -> None:
        """The platform refused `token`: the next `get` fetches a new one (unless another
        caller already did)."""
        if self._token == token:
            self._token = None

    async def _fetch(self) -> str:
        response = await call(
            self._client,
            "tenant_access_token",
            self._url,
            attempts=3,
            backoff=self._backoff,
            json={"app_id": self._app_id, "app_secret": self._app_secret},
        )
        body = as_json(response, "tenant_access_token")
        token = body.get("tenant_access_token")
        if body.get("code") != 0 or not isinstance(token, str) or not token:
            raise PlatformError(
                f"tenant_access_token: code {body.get('code')} {body.get('msg') or ''}".strip()
            )
        expire = body.get("expire")
        ttl = float(expire) if isinstance(expire, (int, float)) and expire > 0 else _DEFAULT_TTL_S
        self.fetches += 1
        self._token = token
        self._refresh_at = self._clock() + ttl - min(_EARLY_S, ttl / 2)
        return token
