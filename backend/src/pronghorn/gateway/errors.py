"""Every error is JSON `{"detail": "..."}` with the right status."""

from __future__ import annotations

import errno
import json
import logging
import math
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field, ValidationError
from pydantic_core import ErrorDetails
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from pronghorn.agent.untyped import as_dict
from pronghorn.auth.authenticator import AuthError
from pronghorn.auth.errors import AccountError
from pronghorn.gateway.models.bodies import hoist_body_defs, schema_components
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.errors import (
    Conflict,
    DomainError,
    Forbidden,
    InvalidInput,
    InvalidRequest,
    InvalidRun,
    NotFound,
    Overloaded,
    RefusedRun,
    TooLarge,
    Unavailable,
    Unprocessable,
    is_database_unreachable,
)

log = logging.getLogger("pronghorn.http")

RETRY_AFTER_S = 2
"""`Retry-After` of a 503 (a backing service away for a moment)."""
UNREACHABLE_DETAIL = "The database is unreachable right now; nothing was changed. Retry shortly."


class ApiError(Exception):
    """Raised by services; mapped to an HTTP status by the app."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


DOMAIN_STATUS: Mapping[type[DomainError], int] = {
    InvalidRun: 400,
    InvalidRequest: 400,
    InvalidInput: 422,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    RefusedRun: 422,
    Overloaded: 429,
    TooLarge: 413,
    Unprocessable: 422,
    Unavailable: 503,
}
"""The HTTP status of each kind of runtime error (the most specific class wins)."""


def domain_status(exc: DomainError) -> int:
    for kind in type(exc).__mro__:
        status = DOMAIN_STATUS.get(kind) if issubclass(kind, DomainError) else None
        if status is not None:
            return status
    return 400


class ErrorResponse(BaseModel):
    """The body of every error answer (the LangGraph reference's `ErrorResponse`)."""

    detail: str = Field(description="Human-readable error message")


DISK_FULL_DETAIL = (
    "Insufficient storage: the server's disk (or quota) is full, nothing was saved. "
    "Free some space and retry."
)

_DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_SQLITE_FULL = 13  # SQLITE_FULL: "database or disk is full"
_PG_DISK_FULL = "53100"  # PostgreSQL SQLSTATE disk_full


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        orig = getattr(current, "orig", None)  # SQLAlchemy's wrapped DBAPI error
        if isinstance(orig, BaseException) and id(orig) not in seen:
            yield orig
            seen.add(id(orig))
        current = current.__cause__ or current.__context__


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) is ENOSPC/EDQUOT, SQLITE_FULL or PostgreSQL's."""
    for err in _chain(exc):
        if isinstance(err, OSError) and err.errno in _DISK_FULL_ERRNOS:
            return True
        if isinstance(err, sqlite3.Error) and (
            getattr(err, "sqlite_errorcode", None) == _SQLITE_FULL
            or "database or disk is full" in str(err)
        ):
            return True
        if getattr(err, "sqlstate", None) == _PG_DISK_FULL:
            return True
    return False


def describe_errors(errors: Sequence[ErrorDetails]) -> str:
    """One line for pydantic's errors: `field.path: message; ...` (no `body.` prefix)."""
    parts: list[str] = []
    for err in errors:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts) or "Invalid request"


def invalid(exc: ValidationError) -> ApiError:
    """The 422 for a body the handler validated itself."""
    return ApiError(422, describe_errors(exc.errors()))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status)

    @app.exception_handler(AccountError)
    async def _account_error(_: Request, exc: AccountError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status)

    @app.exception_handler(AuthError)
    async def _auth_error(_: Request, exc: AuthError) -> JSONResponse:
        headers: dict[str, str] = {}
        if exc.retry_after_s is not None:
            headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
        if exc.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=headers)

    @app.exception_handler(DomainError)
    async def _domain_error(_: Request, exc: DomainError) -> JSONResponse:
        headers: dict[str, str] = {}
        if isinstance(exc, Overloaded):
            headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
        elif isinstance(exc, Unavailable):
            headers["Retry-After"] = str(RETRY_AFTER_S)
        return JSONResponse(
            {"detail": exc.message}, status_code=domain_status(exc), headers=headers
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            {"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": describe_errors(exc.errors())}, status_code=422)

    async def _server_error(_: Request, exc: Exception) -> JSONResponse:
        """Disk full → 507 with a message saying so; anything else is a logged 500."""
        if is_disk_full(exc):
            log.error("disk full: %s", exc)
            return JSONResponse({"detail": DISK_FULL_DETAIL}, status_code=507)
        if is_database_unreachable(exc):
            log.warning("database unreachable: %s", exc)
            return JSONResponse(
                {"detail": UNREACHABLE_DETAIL},
                status_code=503,
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        log.exception("unhandled error", exc_info=exc)
        return JSONResponse({"detail": "Internal server error"}, status_code=500)

    # OS and database errors are answered by Starlette's ExceptionMiddleware; `Exception` by
    # ServerErrorMiddleware (which logs and re-raises), for disk full wrapped in anything else.
    for kind in (OSError, sqlite3.Error, SQLAlchemyError, Exception):
        app.add_exception_handler(kind, _server_error)

    _document_error_body(app)


def _document_error_body(app: FastAPI) -> None:
    """Make the OpenAPI document say what our errors are: `{"detail": "..."}` everywhere.

    FastAPI documents its own 422 body (`HTTPValidationError`, a list of error objects), but
    `_validation_error` answers `ErrorResponse`, as the reference server does.
    """
    generate = app.openapi

    def openapi() -> dict[str, Any]:  # Any: FastAPI.openapi's signature
        if app.openapi_schema is None:
            app.openapi_schema = hoist_body_defs(use_error_response(generate()))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def use_error_response(schema: dict[str, object]) -> dict[str, object]:
    """Point every 422 of `schema` at `ErrorResponse` and drop FastAPI's unused error models."""
    components = schema_components(schema)
    components["ErrorResponse"] = ErrorResponse.model_json_schema()
    ref = {"$ref": "#/components/schemas/ErrorResponse"}
    for operations in (as_dict(schema.get("paths")) or {}).values():
        for item in (as_dict(operations) or {}).values():
            operation = as_dict(item)
            if operation is None:
                continue
            answer = as_dict((as_dict(operation.get("responses")) or {}).get("422"))
            if answer is not None:
                answer["content"] = {"application/json": {"schema": dict(ref)}}
    for name in ("HTTPValidationError", "ValidationError"):
        if f'"#/components/schemas/{name}"' not in json.dumps(schema):
            components.pop(name, None)
    return schema
