"""FastAPI dependencies: the Runtime and id validation."""

from __future__ import annotations

import uuid

from fastapi import Request

from pronghorn.gateway.errors import ApiError
from pronghorn.runtime.runtime import Runtime


async def get_runtime(request: Request) -> Runtime:
    return request.app.state.runtime


def check_uuid(value: str, what: str) -> str:
    """422 `Invalid <what> ID: must be a UUID` for a malformed id, as the reference does."""
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        raise ApiError(422, f"Invalid {what} ID: must be a UUID") from None
