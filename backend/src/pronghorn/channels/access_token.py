"""An app access token (WeCom's `gettoken`, DingTalk's `oauth2/accessToken`, Feishu's
`tenant_access_token`): fetched by a platform-specific call, cached, refreshed ahead of its
expiry (`early_s` before it, at most half its lifetime) and at once when the platform
refuses it (`invalidate`). One fetch at a time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

# The platform's answer: the token and its lifetime in seconds.
Fetch = Callable[[], Awaitable[tuple[str, float]]]


class AccessToken:
    def __init__(
        self,
        fetch: Fetch,
        *,
        early_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._early_s = early_s
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
            token, ttl = await self._fetch()
            self.fetches += 1
            self._token = token
            self._refresh_at = self._clock() + ttl - min(self._early_s, ttl / 2)
            return token

    def invalidate(self, token: str) -> None:
        """The platform refused `token`: the next `get` fetches a new one (unless another
        caller already did)."""
        if self._token == token:
            self._token = None
