"""Dependencies of the auth routers: the local user behind a request, admins only."""

from __future__ import annotations

from fastapi import Depends, Request

from pronghorn.auth import users
from pronghorn.auth.principal import Principal
from pronghorn.auth.users import User
from pronghorn.gateway.deps import get_principal, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.runtime.wiring.app_runtime import AppRuntime


def require_local(runtime: AppRuntime) -> None:
    if runtime.auth.mode != "local":
        raise ApiError(400, f"Not available with auth.mode: {runtime.auth.mode} (needs local)")


async def current_user(
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    principal: Principal = Depends(get_principal),
) -> User:
    """The database user the request authenticated as (mode local only)."""
    require_local(runtime)
    user = await users.get(runtime.db, principal.identity)
    if user is None or user.disabled:
        raise ApiError(401, "User not found or disabled")
    return user


async def admin_user(user: User = Depends(current_user)) -> User:
    if not user.is_admin:
        raise ApiError(403, "Admins only")
    return user
