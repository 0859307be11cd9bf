"""The contract every auth backend implements (`auth.mode`: none, local, custom)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from starlette.types import Scope

from pronghorn.auth.principal import LOCAL_PRINCIPAL, Principal


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a request offers to prove who it is (the gateway builds it from the scope)."""

    method: str
    path: str
    headers: Mapping[str, str]  # lower-case names; the first value of each
    cookies: Mapping[str, str] = field(default_factory=dict[str, str])
    client_ip: str | None = None  # after trusted-proxy resolution
    query_string: str = ""  # the raw query string, without the "?"
    scope: Scope | None = None  # the ASGI scope, for backends that hand it on (custom auth)


class AuthError(Exception):
    """Authentication failed: the gateway answers `status` with `detail` (and
    `Retry-After` when `retry_after_s` is set, plus any `headers`)."""

    def __init__(
        self,
        detail: str,
        status: int = 401,
        retry_after_s: float | None = None,
        headers: Mapping[str, str] | None = None,
    ):
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.retry_after_s = retry_after_s
        self.headers: Mapping[str, str] = dict(headers or {})


class Authenticator(Protocol):
    async def authenticate(self, credentials: Credentials) -> Principal:
        """The principal behind `credentials`, or raise `AuthError`."""
        ...


class NoAuth:
    """`auth.mode: none`: everyone is the one local user (loopback binds only)."""

    async def authenticate(self, credentials: Credentials) -> Principal:
        return LOCAL_PRINCIPAL
