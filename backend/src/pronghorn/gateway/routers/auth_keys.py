"""`/api/auth/keys`: your own API keys (the secret is shown once, at creation)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.auth import api_keys, audit
from pronghorn.auth.users import User
from pronghorn.gateway.deps import get_runtime
from pronghorn.gateway.models.auth import ApiKeyCreated, ApiKeyRecord
from pronghorn.gateway.models.errors import answers, errors
from pronghorn.gateway.routers.auth_deps import current_user
from pronghorn.gateway.session_cookie import client_ip
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/auth/keys", tags=["auth"], route_class=StrictJSONRoute)


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=255)
    expires_in_days: float | None = Field(None, description="None: the key never expires.")


@router.get(
    "",
    response_model=None,
    responses={**answers(list[ApiKeyRecord]), **errors(400, 401)},
)
async def list_keys(
    runtime: AppRuntime = Depends(get_runtime), user: User = Depends(current_user)
) -> list[dict[str, object]]:
    return [key.to_api() for key in await api_keys.list_keys(runtime.db, user.id)]


@router.post(
    "",
    status_code=201,
    response_model=None,
    responses={**answers(ApiKeyCreated, 201), **errors(400, 401, 422)},
)
async def create_key(
    body: KeyCreate,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    user: User = Depends(current_user),
) -> dict[str, object]:
    record, secret = await api_keys.create(
        runtime.db, user.id, name=body.name, expires_in_days=body.expires_in_days
    )
    await audit.record(
        runtime.db,
        "key.create",
        actor=user.id,
        target=record.id,
        client_ip=client_ip(request),
        detail={"name": record.name, "prefix": record.prefix},
    )
    return {**record.to_api(), "key": secret}


@router.delete("/{key_id}", status_code=204, responses=errors(400, 401, 404))
async def revoke_key(
    key_id: str,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    user: User = Depends(current_user),
) -> Response:
    record = await api_keys.revoke(runtime.db, key_id, user_id=user.id)
    await audit.record(
        runtime.db,
        "key.revoke",
        actor=user.id,
        target=record.id,
        client_ip=client_ip(request),
        detail={"name": record.name, "prefix": record.prefix},
    )
    return Response(status_code=204)
