"""Admin only: `/api/auth/users` (create, list, update, disable, delete) and `/api/auth/audit`."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.auth import audit, users
from pronghorn.auth.errors import AccountError
from pronghorn.auth.users import User
from pronghorn.gateway.deps import get_runtime
from pronghorn.gateway.models.auth import AuditEntry, AuthUser
from pronghorn.gateway.models.errors import answers, errors
from pronghorn.gateway.routers.auth_deps import admin_user
from pronghorn.gateway.session_cookie import client_ip
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.services.user_removal import remove_user
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/auth", tags=["auth"], route_class=StrictJSONRoute)


class UserCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(max_length=255)
    password: str = Field(max_length=4096)
    display_name: str | None = Field(None, max_length=255)
    role: str = "user"
    email: str | None = Field(None, max_length=255)


class UserPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    display_name: str | None = Field(None, max_length=255)
    role: str | None = None
    disabled: bool | None = None
    password: str | None = Field(None, max_length=4096)
    email: str | None = Field(None, max_length=255, description="'' removes it.")


@router.get(
    "/users",
    response_model=None,
    responses={**answers(list[AuthUser]), **errors(400, 401, 403)},
)
async def list_users(
    runtime: AppRuntime = Depends(get_runtime), _admin: User = Depends(admin_user)
) -> list[dict[str, object]]:
    return [user.to_api() for user in await users.list_users(runtime.db)]


@router.post(
    "/users",
    status_code=201,
    response_model=None,
    responses={**answers(AuthUser, 201), **errors(400, 401, 403, 409, 422)},
)
async def create_user(
    body: UserCreate,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    admin: User = Depends(admin_user),
) -> dict[str, object]:
    user = await users.create(
        runtime.db,
        username=body.username,
        password=body.password,
        display_name=body.display_name,
        role=body.role,
        email=body.email,
    )
    await audit.record(
        runtime.db,
        "user.create",
        actor=admin.id,
        target=user.id,
        client_ip=client_ip(request),
        detail={"username": user.username, "role": user.role},
    )
    return user.to_api()


@router.patch(
    "/users/{user_id}",
    response_model=None,
    responses={**answers(AuthUser), **errors(400, 401, 403, 404, 409, 422)},
)
async def update_user(
    user_id: str,
    body: UserPatch,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    admin: User = Depends(admin_user),
) -> dict[str, object]:
    before, after = await users.update(
        runtime.db,
        user_id,
        display_name=body.display_name,
        role=body.role,
        disabled=body.disabled,
        password=body.password,
        email=body.email,
    )
    changed = sorted(k for k, v in body.model_dump(exclude_unset=True).items() if v is not None)
    action = "user.disable" if after.disabled and not before.disabled else "user.update"
    detail: dict[str, object] = {"username": after.username, "changed": changed}
    if body.role is not None:
        detail["role"] = after.role
    if body.disabled is not None:
        detail["disabled"] = after.disabled
    await audit.record(
        runtime.db,
        action,
        actor=admin.id,
        target=after.id,
        client_ip=client_ip(request),
        detail=detail,
    )
    return after.to_api()


class UserRemoved(BaseModel):
    """The deleted account and how much of theirs went with it."""

    user: AuthUser
    removed: dict[str, int]


@router.delete(
    "/users/{user_id}",
    response_model=None,
    responses={**answers(UserRemoved), **errors(400, 401, 403, 404, 409, 422)},
)
async def delete_user(
    user_id: str,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    admin: User = Depends(admin_user),
) -> dict[str, object]:
    """Delete the user and everything of theirs: sessions, API keys, threads (runs,
    checkpoints, files), crons, custom agents, memory, store items, IM bindings. 409 for
    yourself or the last enabled admin. The audit log keeps the deletion."""
    if user_id == admin.id:
        raise AccountError("Refused: you cannot delete your own account", 409)
    user, removed = await remove_user(runtime, user_id)
    await audit.record(
        runtime.db,
        "user.delete",
        actor=admin.id,
        target=user.id,
        client_ip=client_ip(request),
        detail={"username": user.username, **removed.to_json()},
    )
    return {"user": user.to_api(), "removed": removed.to_json()}


@router.get(
    "/audit",
    response_model=None,
    responses={**answers(list[AuditEntry]), **errors(400, 401, 403, 422)},
)
async def audit_log(
    runtime: AppRuntime = Depends(get_runtime),
    _admin: User = Depends(admin_user),
    limit: int = Query(50, ge=1, le=500),
    before: int | None = Query(None, ge=1, description="Entries with a smaller id (paging)."),
) -> list[dict[str, object]]:
    """Newest first; pass the last entry's id as `before` for the next page."""
    return [entry.to_api() for entry in await audit.page(runtime.db, limit=limit, before=before)]
