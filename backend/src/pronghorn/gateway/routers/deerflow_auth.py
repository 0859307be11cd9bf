"""`/api/v1/auth/*`: DeerFlow's login, setup and account screens on Pronghorn's local accounts.

These are the same sessions as Pronghorn's own login (`/api/auth/login`): the same table,
expiry, revocation, failure limits and audit entries. Only the cookies differ, because
DeerFlow's browser code and its Next server read them by name: the session token goes in
the HttpOnly `access_token` cookie and the session's CSRF token in a script-readable
`csrf_token` cookie, which DeerFlow echoes as `X-CSRF-Token` (checked against the session,
as for Pronghorn's UI). Accounts are made by an admin; DeerFlow's self-registration and
first-admin screens answer why not (docs/deerflow.md)."""

from __future__ import annotations

import re

from fastapi import APIRouter, Depends, Form, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.auth import audit, sessions, users
from pronghorn.auth.origin import same_origin
from pronghorn.auth.principal import Principal
from pronghorn.auth.users import User
from pronghorn.gateway.deps import get_principal, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.deerflow_auth import (
    DeerFlowLogin,
    DeerFlowMessage,
    DeerFlowProviders,
    DeerFlowSetupStatus,
    DeerFlowUser,
)
from pronghorn.gateway.models.errors import answers, errors
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.routers.auth import current_password_ok, password_login
from pronghorn.gateway.routers.auth_deps import current_user
from pronghorn.gateway.session_cookie import client_ip, is_https
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/v1/auth", tags=["deerflow"])

CSRF_COOKIE = "csrf_token"
NO_EMAIL_DOMAIN = "pronghorn.invalid"  # RFC 2606: never a real address
NOT_LOCAL_PART = re.compile(r"[^A-Za-z0-9._+-]")


class PasswordChange(BaseModel):
    model_config = ConfigDict(extra="ignore")

    current_password: str = Field(max_length=4096)
    new_password: str = Field(max_length=4096)
    new_email: str | None = Field(None, max_length=255)
    remember_me: bool = True


def shown_email(username: str, email: str | None) -> str:
    """DeerFlow's user has an email-shaped `email`: the account's email, else its username
    when it is one, else `<username>@pronghorn.invalid` (a reserved, never-real domain)."""
    if email:
        return email
    if users.EMAIL_RE.fullmatch(username):
        return username
    return f"{NOT_LOCAL_PART.sub('-', username) or 'user'}@{NO_EMAIL_DOMAIN}"


def user_json(principal: Principal, user: User | None) -> dict[str, object]:
    """DeerFlow's `User`: {id, email, system_role, needs_setup, oauth_provider}."""
    if user is None:  # auth.mode none/custom: the principal has no account row
        name = principal.username or principal.identity
        return {
            "id": principal.identity,
            "email": shown_email(name, None),
            "system_role": principal.role,
            "needs_setup": False,
            "oauth_provider": None,
        }
    return {
        "id": user.id,
        "email": shown_email(user.username, user.email),
        "system_role": user.role,
        "needs_setup": False,
        "oauth_provider": "oidc" if user.external_issuer else None,
    }


def _check_origin(request: Request, runtime: AppRuntime) -> None:
    """Public writes (login, logout) refuse a page of another origin (login CSRF)."""
    origin = request.headers.get("origin")
    if origin is not None and not same_origin(
        origin, request.headers.get("host"), runtime.auth.trusted_origins
    ):
        raise ApiError(403, f"Cross-origin request refused (Origin {origin[:100]!r})")


def _set_cookies(
    response: Response, request: Request, runtime: AppRuntime, token: str, csrf: str, remember: bool
) -> None:
    """The session (HttpOnly) and its CSRF token (read by DeerFlow's scripts); persistent
    for the session's lifetime when `remember`, else until the browser closes."""
    max_age = int(runtime.auth.session_ttl.total_seconds()) if remember else None
    secure = is_https(request)
    response.set_cookie(
        sessions.DEERFLOW_COOKIE_NAME,
        token,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="lax",
        secure=secure,
    )
    response.set_cookie(
        CSRF_COOKIE, csrf, max_age=max_age, path="/", httponly=False, samesite="lax", secure=secure
    )


def _clear_cookies(response: Response, request: Request) -> None:
    secure = is_https(request)
    response.delete_cookie(
        sessions.DEERFLOW_COOKIE_NAME, path="/", httponly=True, samesite="lax", secure=secure
    )
    response.delete_cookie(CSRF_COOKIE, path="/", httponly=False, samesite="lax", secure=secure)


@router.get("/setup-status", response_model=DeerFlowSetupStatus)
async def setup_status(runtime: AppRuntime = Depends(get_runtime)) -> dict[str, object]:
    """`needs_setup` while a local-accounts server has no user yet; never self-registration."""
    needs = runtime.auth.mode == "local" and await users.count(runtime.db) == 0
    return {"needs_setup": needs, "registration_enabled": False}


@router.get("/providers", response_model=DeerFlowProviders)
async def providers() -> dict[str, object]:
    """No SSO buttons on DeerFlow's login screen: Pronghorn's OIDC login is on its own UI."""
    return {"providers": []}


@router.post(
    "/login/local",
    response_model=DeerFlowLogin,
    responses=errors(400, 401, 403, 422, 429),
)
async def login_local(
    request: Request,
    username: str = Form(max_length=255, description="A username or an email."),
    password: str = Form(max_length=4096),
    remember_me: bool = Form(True),
    runtime: AppRuntime = Depends(get_runtime),
) -> Response:
    _check_origin(request, runtime)
    user = await password_login(request, runtime, username, password)
    token, csrf = await sessions.start(runtime.db, user.id, ttl=runtime.auth.session_ttl)
    ttl = int(runtime.auth.session_ttl.total_seconds())
    response = JSONResponse({"expires_in": ttl, "needs_setup": False})
    _set_cookies(response, request, runtime, token, csrf, remember_me)
    return response


@router.post("/register", include_in_schema=False)
async def register() -> Response:
    """Always 403: DeerFlow's sign-up form, answered with the reason (not documented)."""
    raise ApiError(
        403,
        "Self-registration is off: an admin makes accounts (Pronghorn's UI, "
        "POST /api/auth/users, or `pronghorn users create`)",
    )


@router.post("/initialize", include_in_schema=False)
async def initialize(runtime: AppRuntime = Depends(get_runtime)) -> Response:
    """Never creates anyone (403, or 409 once an admin exists, with the `code` DeerFlow's
    setup page reads): the first admin is made with Pronghorn's one-time setup link."""
    if runtime.auth.mode != "local" or await users.count(runtime.db) > 0:
        message = "An admin already exists"
        body = {"detail": message, "code": "system_already_initialized", "message": message}
        return JSONResponse(body, status_code=409)
    raise ApiError(
        403,
        "Create the first admin with Pronghorn's setup link (printed at start, token in "
        "<data_dir>/setup-token) or `pronghorn users create --admin`",
    )


@router.get(
    "/me",
    response_model=DeerFlowUser,
    responses={**answers(DeerFlowUser), **errors(401)},
)
async def me(
    runtime: AppRuntime = Depends(get_runtime),
    principal: Principal = Depends(get_principal),
) -> dict[str, object]:
    user = await users.get(runtime.db, principal.identity) if runtime.auth.mode == "local" else None
    if runtime.auth.mode == "local" and (user is None or user.disabled):
        raise ApiError(401, "User not found or disabled")
    return user_json(principal, user)


@router.post("/logout", response_model=DeerFlowMessage, responses=errors(403))
async def logout(request: Request, runtime: AppRuntime = Depends(get_runtime)) -> Response:
    """End the session behind the `access_token` cookie (if any) and clear the cookies."""
    _check_origin(request, runtime)
    token = request.cookies.get(sessions.DEERFLOW_COOKIE_NAME)
    if token and runtime.auth.mode == "local":
        session = await sessions.resolve(runtime.db, token, ttl=runtime.auth.session_ttl)
        if session is not None and await sessions.end(runtime.db, token):
            await audit.record(
                runtime.db,
                "logout",
                actor=session.user.id,
                target=session.user.username,
                client_ip=client_ip(request),
            )
    response = JSONResponse({"message": "Logged out"})
    _clear_cookies(response, request)
    return response


@router.post(
    "/change-password",
    response_model=DeerFlowMessage,
    responses=errors(400, 401, 403, 409, 422, 429),
)
async def change_password(
    body: PasswordChange,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    user: User = Depends(current_user),
) -> Response:
    """Every session of the user ends (as with `/api/auth/password`); this browser gets a
    new one, since DeerFlow's account screen stays signed in."""
    ip = client_ip(request)
    if not await current_password_ok(runtime, ip, user, body.current_password):
        raise ApiError(400, "Current password is wrong")
    await users.update(runtime.db, user.id, password=body.new_password, email=body.new_email)
    await audit.record(
        runtime.db, "password.change", actor=user.id, target=user.username, client_ip=ip
    )
    token, csrf = await sessions.start(runtime.db, user.id, ttl=runtime.auth.session_ttl)
    response = JSONResponse({"message": "Password changed"})
    _set_cookies(response, request, runtime, token, csrf, body.remember_me)
    return response
