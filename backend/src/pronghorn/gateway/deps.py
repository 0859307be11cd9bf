"""FastAPI dependencies: the AppRuntime, the principal and id validation."""

from __future__ import annotations

import uuid

from fastapi import Request

from pronghorn.auth.principal import Principal
from pronghorn.gateway.errors import ApiError
from pronghorn.runtime.access import Access
from pronghorn.runtime.wiring.app_runtime import AppRuntime

# An admin sees every user's resources only when asking so (docs/security.md, "Isolation").
ALL_USERS_HEADER = "x-pronghorn-all-users"
ALL_USERS_QUERY = "all_users"
_TRUE = frozenset({"1", "true", "yes", "on"})


async def get_runtime(request: Request) -> AppRuntime:
    return request.app.state.runtime


async def get_principal(request: Request) -> Principal:
    """Who is asking; set by `AuthMiddleware` for every protected path."""
    principal: Principal | None = getattr(request.state, "principal", None)
    if principal is None:  # a public route asked for a principal: a wiring bug
        raise RuntimeError(f"no principal on {request.url.path}: the path is public")
    return principal


async def get_access(request: Request) -> Access:
    """The principal, and whether it asked for every user's resources (honoured for admins
    only): header `X-Pronghorn-All-Users: true`, or `?all_users=true`."""
    principal = await get_principal(request)
    flag = request.headers.get(ALL_USERS_HEADER) or request.query_params.get(ALL_USERS_QUERY)
    return Access(principal, all_users=(flag or "").strip().lower() in _TRUE)


def check_uuid(value: object, what: str) -> str:
    """422 `Invalid <what> ID: must be a UUID` for a malformed id (or a JSON body's
    non-string), as the reference does."""
    if not isinstance(value, str):
        raise ApiError(422, f"Invalid {what} ID: must be a UUID")
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        raise ApiError(422, f"Invalid {what} ID: must be a UUID") from None
