"""FastAPI dependencies: the Runtime, the principal and id validation."""

from __future__ import annotations

import uuid

from fastapi import Request

from pronghorn.auth.principal import Principal
from pronghorn.gateway.errors import ApiError
from pronghorn.runtime.runtime import Runtime


async def get_runtime(request: Request) -> Runtime:
    return request.app.state.runtime


async def get_principal(request: Request) -> Principal:
    """Who is asking; set by `AuthMiddleware` for every protected path."""
    principal: Principal | None = getattr(request.state, "principal", None)
    if principal is None:  # a public route asked for a principal: a wiring bug
        raise RuntimeError(f"no principal on {request.url.path}: the path is public")
    return principal


def check_uuid(value: str, what: str) -> str:
    """422 `Invalid <what> ID: must be a UUID` for a malformed id, as the reference does."""
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        raise ApiError(422, f"Invalid {what} ID: must be a UUID") from None
