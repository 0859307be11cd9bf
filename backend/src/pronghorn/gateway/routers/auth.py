"""`/api/auth`: config, first-run setup, login, logout, me, password change.

Keys live in auth_keys.py, admin user management and the audit log in auth_admin.py."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.auth import audit, sessions, setup_token, users
from pronghorn.auth.authenticator import AuthError
from pronghorn.auth.principal import Principal
from pronghorn.auth.users import User, username_key
from pronghorn.auth.verify import verify_password_of
from pronghorn.gateway.deps import get_principal, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.auth import AuthConfig, Session
from pronghorn.gateway.models.errors import answers, errors
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.routers.auth_deps import current_user, require_local
from pronghorn.gateway.session_cookie import clear_session_cookie, client_ip, set_session_cookie
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/auth", tags=["auth"], route_class=StrictJSONRoute)

BAD_LOGIN = "Invalid username or password"


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SetupBody(Body):
    token: str = Field(max_length=512)
    username: str = Field(max_length=255)
    password: str = Field(max_length=4096)
    display_name: str | None = Field(None, max_length=255)


class LoginBody(Body):
    username: str = Field(max_length=255)
    password: str = Field(max_length=4096)


class PasswordBody(Body):
    current_password: str = Field(max_length=4096)
    new_password: str = Field(max_length=4096)


def local_user_json(principal: Principal) -> dict[str, object]:
    """The user JSON of a principal that has no database row (auth.mode none)."""
    return {
        "id": principal.identity,
        "username": principal.username or principal.identity,
        "display_name": principal.display_name,
        "role": principal.role,
        "disabled": False,
        "created_at": None,
    }


async def _logged_in(
    request: Request, runtime: AppRuntime, user: User, status: int
) -> JSONResponse:
    cookie, csrf = await sessions.start(runtime.db, user.id, ttl=runtime.auth.session_ttl)
    response = JSONResponse({"user": user.to_api(), "csrf_token": csrf}, status_code=status)
    set_session_cookie(response, cookie, request)
    return response


@router.get(
    "/config",
    response_model=None,
    responses={**answers(AuthConfig)},
)
async def auth_config(runtime: AppRuntime = Depends(get_runtime)) -> dict[str, object]:
    mode = runtime.auth.mode
    setup_required = mode == "local" and await users.count(runtime.db) == 0
    oidc = runtime.config.auth.oidc
    sso = {"label": oidc.label} if oidc is not None and mode == "local" else None
    return {"mode": mode, "setup_required": setup_required, "oidc": sso}


@router.post(
    "/setup",
    status_code=201,
    response_model=None,
    responses={**answers(Session, 201), **errors(403, 409, 422)},
)
async def setup(
    body: SetupBody, request: Request, runtime: AppRuntime = Depends(get_runtime)
) -> Response:
    """Create the first admin with the one-time setup token, and log them in."""
    if runtime.auth.mode != "local":
        raise ApiError(409, f"No setup with auth.mode: {runtime.auth.mode}")
    if await users.count(runtime.db) > 0:
        raise ApiError(409, "Setup is already done: an admin exists")
    ip = client_ip(request)
    await runtime.auth.limits.check(ip)
    if not await setup_token.matches(runtime.data_dir, body.token):
        await runtime.auth.limits.failed(ip)
        await audit.record(runtime.db, "setup.failed", client_ip=ip)
        raise ApiError(403, "Wrong or used setup token (see <data_dir>/setup-token)")
    user = await users.create(
        runtime.db,
        username=body.username,
        password=body.password,
        display_name=body.display_name,
        role="admin",
        only_if_first=True,
    )
    await setup_token.remove(runtime.data_dir)
    await audit.record(runtime.db, "setup", actor=user.id, target=user.username, client_ip=ip)
    return await _logged_in(request, runtime, user, 201)


async def password_login(request: Request, runtime: AppRuntime, name: str, password: str) -> User:
    """Check a login name (username or email) and password under the failure limits (per
    client IP and per account, whichever name the account was given by), with audit."""
    require_local(runtime)
    ip = client_ip(request)
    named = await users.by_login(runtime.db, name)
    account = username_key(named.username if named is not None else name)
    limits = runtime.auth.limits
    await limits.check(ip, account)
    user = await users.check_login(runtime.db, name, password)
    if user is None:
        await limits.failed(ip, account)
        await audit.record(runtime.db, "login.failed", target=name.strip()[:255], client_ip=ip)
        raise AuthError(BAD_LOGIN)
    await limits.succeeded(account)
    await audit.record(runtime.db, "login", actor=user.id, target=user.username, client_ip=ip)
    return user


@router.post(
    "/login",
    response_model=None,
    responses={**answers(Session), **errors(400, 401, 422, 429)},
)
async def login(
    body: LoginBody, request: Request, runtime: AppRuntime = Depends(get_runtime)
) -> Response:
    user = await password_login(request, runtime, body.username, body.password)
    return await _logged_in(request, runtime, user, 200)


@router.post("/logout", status_code=204, responses=errors(401))
async def logout(
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    principal: Principal = Depends(get_principal),
) -> Response:
    cookie = request.cookies.get(sessions.COOKIE_NAME)
    if cookie and runtime.auth.mode == "local" and await sessions.end(runtime.db, cookie):
        await audit.record(
            runtime.db,
            "logout",
            actor=principal.identity,
            target=principal.username,
            client_ip=client_ip(request),
        )
    response = Response(status_code=204)
    clear_session_cookie(response, request)
    return response


@router.get(
    "/me",
    response_model=None,
    responses={**answers(Session), **errors(401)},
)
async def me(
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    principal: Principal = Depends(get_principal),
) -> dict[str, object]:
    if runtime.auth.mode != "local":
        return {"user": local_user_json(principal), "csrf_token": None}
    user = await current_user(request, runtime, principal)
    csrf: str | None = None
    cookie = request.cookies.get(sessions.COOKIE_NAME)
    if principal.kind == "session" and cookie:
        session = await sessions.resolve(runtime.db, cookie, ttl=runtime.auth.session_ttl)
        csrf = session.csrf_token if session is not None else None
    return {"user": user.to_api(), "csrf_token": csrf}


@router.post("/password", status_code=204, responses=errors(400, 401, 403, 422))
async def change_password(
    body: PasswordBody,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    user: User = Depends(current_user),
) -> Response:
    """Change your password; every session of yours ends (log in again)."""
    ip = client_ip(request)
    if not await current_password_ok(runtime, ip, user, body.current_password):
        raise ApiError(403, "current_password is wrong")
    await users.update(runtime.db, user.id, password=body.new_password)
    await audit.record(
        runtime.db, "password.change", actor=user.id, target=user.username, client_ip=ip
    )
    response = Response(status_code=204)
    clear_session_cookie(response, request)
    return response


async def current_password_ok(
    runtime: AppRuntime, ip: str | None, user: User, password: str
) -> bool:
    """Whether `password` is the user's, under the same failure limits as a login (a wrong
    one counts against the address and the account)."""
    limits = runtime.auth.limits
    account = username_key(user.username)
    await limits.check(ip, account)
    if await verify_password_of(user, password):
        return True
    await limits.failed(ip, account)
    return False
