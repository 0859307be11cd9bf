"""The app's `tenant_access_token` (self-built app), fetched from
`/open-apis/auth/v3/tenant_access_token/internal`; `channels/access_token.py` caches and
refreshes it like the other platforms' tokens."""

from __future__ import annotations

import httpx

from pronghorn.channels.access_token import AccessToken
from pronghorn.channels.errors import PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
# Business codes meaning "this access token is missing, invalid or expired".
TOKEN_INVALID_CODES = frozenset({99991661, 99991663, 99991677})
_DEFAULT_TTL_S = 7200.0
_EARLY_S = 600.0  # refresh this long before the announced expiry (at most half the TTL)


def tenant_token(
    client: httpx.AsyncClient, base_url: str, app_id: str, app_secret: str, backoff: Backoff
) -> AccessToken:
    """The app's token, cached (pass `clock` on the result's constructor in tests)."""
    return AccessToken(TenantFetch(client, base_url, app_id, app_secret, backoff), early_s=_EARLY_S)


class TenantFetch:
    """One `tenant_access_token` call: the token and its lifetime in seconds."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        app_id: str,
        app_secret: str,
        backoff: Backoff,
    ) -> None:
        self._client = client
        self._url = base_url.rstrip("/") + TOKEN_PATH
        self._app_id, self._app_secret = app_id, app_secret
        self._backoff = backoff

    async def __call__(self) -> tuple[str, float]:
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
        return token, ttl
