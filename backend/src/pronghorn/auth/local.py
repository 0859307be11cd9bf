"""`auth.mode: local`: API keys and session cookies of the users in the database.

- `x-api-key: phk_...` or `Authorization: Bearer phk_...` → an `api_key` principal; an
  unknown, revoked or expired key, or a disabled user's, is a 401 (and counts against
  the client's failure limit);
- else the `pronghorn_session` cookie (or DeerFlow's `access_token`, holding the same kind
  of session token) → a `session` principal. A mutating request
  (anything but GET/HEAD/OPTIONS) on a cookie must echo the session's CSRF token in
  `X-CSRF-Token` and, when it sends an `Origin`, come from this server's origin (403).
"""

from __future__ import annotations

from collections.abc import Mapping

from pronghorn.auth import api_keys, sessions
from pronghorn.auth.authenticator import AuthError, Credentials
from pronghorn.auth.origin import same_origin
from pronghorn.auth.principal import Principal, PrincipalKind
from pronghorn.auth.services import AuthServices
from pronghorn.auth.tokens import same
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos.users import User

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "x-csrf-token"

KEY_REFUSALS = {
    "unknown": "Invalid API key",
    "revoked": "API key revoked",
    "expired": "API key expired",
    "disabled": "User disabled",
}


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The API key a request sends, if any (x-api-key, or a Bearer token)."""
    key = headers.get("x-api-key")
    if key is not None and key.strip():
        return key.strip()
    auth = headers.get("authorization")
    if auth is not None:
        scheme, _, value = auth.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return None


def principal_of(user: User, kind: PrincipalKind) -> Principal:
    return Principal(
        identity=user.id,
        display_name=user.display_name or user.username,
        role=user.role,
        kind=kind,
        username=user.username,
    )


class LocalAuthenticator:
    def __init__(self, db: Database, services: AuthServices) -> None:
        self.db = db
        self.services = services

    async def authenticate(self, credentials: Credentials) -> Principal:
        headers = credentials.headers
        key = presented_key(headers)
        if key is not None:
            return await self._by_key(key, credentials.client_ip)
        cookies = credentials.cookies
        cookie = cookies.get(sessions.COOKIE_NAME) or cookies.get(sessions.DEERFLOW_COOKIE_NAME)
        if cookie:
            return await self._by_session(cookie, credentials, headers)
        raise AuthError("Authentication required: log in, or send an API key (x-api-key)")

    async def _by_key(self, key: str, client_ip: str | None) -> Principal:
        limits = self.services.limits
        await limits.check(client_ip)
        check = await api_keys.resolve(self.db, key)
        if check.refusal is not None or check.user is None:
            account = check.user.id if check.user is not None else None
            await limits.failed(client_ip, account)
            raise AuthError(KEY_REFUSALS[check.refusal or "unknown"])
        return principal_of(check.user, "api_key")

    async def _by_session(
        self, cookie: str, credentials: Credentials, headers: Mapping[str, str]
    ) -> Principal:
        session = await sessions.resolve(self.db, cookie, ttl=self.services.session_ttl)
        if session is None:
            raise AuthError("Session expired or invalid: log in again")
        if credentials.method.upper() not in SAFE_METHODS:
            sent = headers.get(CSRF_HEADER, "")
            if not sent or not same(sent, session.csrf_token):
                raise AuthError("CSRF token missing or wrong (send X-CSRF-Token)", status=403)
            origin = headers.get("origin")
            if origin is not None and not same_origin(
                origin, headers.get("host"), self.services.trusted_origins
            ):
                raise AuthError(f"Cross-origin request refused (Origin {origin[:100]!r})", 403)
        return principal_of(session.user, "session")
