"""`/api/auth/oidc`: single sign-on with the configured OpenID Connect issuer.

`GET /login[?next=/path]` sends the browser to the issuer (302) with state, nonce and a
PKCE challenge; the login state rides in a signed, HttpOnly cookie scoped to this path.
`GET /callback` checks the state against that cookie, redeems the code, verifies the ID
token, applies `auth.oidc`'s domain and group policy, finds or creates the user (role
mapped), starts a session (the `pronghorn_session` cookie) and redirects to `next`.
A refusal answers 400 / 403 / 502 as JSON, or as a small HTML page to a browser, and is
recorded in the audit log."""

from __future__ import annotations

import html
import logging
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from pronghorn.auth import audit, sessions, users
from pronghorn.auth.errors import AccountError
from pronghorn.auth.oidc.client import OidcClient, OidcError, OidcIdentity
from pronghorn.auth.oidc.login_state import COOKIE_NAME, COOKIE_PATH, LIFETIME_S
from pronghorn.auth.users import User
from pronghorn.gateway.deps import get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.session_cookie import client_ip, is_https, set_session_cookie
from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.auth.oidc")

router = APIRouter(prefix="/api/auth/oidc", tags=["auth"])

CALLBACK_PATH = "/api/auth/oidc/callback"
NEXT_MAX = 2048
SINGLE_PARAMS = ("state", "code", "error")


def _client(runtime: AppRuntime) -> OidcClient:
    if runtime.oidc is None:
        raise ApiError(404, "Single sign-on is not configured (auth.oidc)")
    return runtime.oidc


def safe_next(value: str | None) -> str:
    """`next` as a path on this site ("/", "/chat?x=1"); anything that could leave it
    (an absolute or scheme-relative URL, backslashes, control characters) is a 400."""
    if value is None or value == "":
        return "/"
    parts = urlsplit(value)
    if (
        len(value) > NEXT_MAX
        or not value.startswith("/")
        or value.startswith("//")
        or "\\" in value
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)
        or parts.scheme
        or parts.netloc
    ):
        raise ApiError(400, "next must be a path on this site, like /chat")
    return value


def callback_url(request: Request, runtime: AppRuntime) -> str:
    """`auth.oidc.redirect_url`, else this server's own callback as the client reached it
    (https when a trusted proxy says so)."""
    oidc = runtime.config.auth.oidc
    if oidc is not None and oidc.redirect_url:
        return oidc.redirect_url
    scheme = "https" if is_https(request) else request.url.scheme
    return f"{scheme}://{request.url.netloc}{CALLBACK_PATH}"


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def refusal(request: Request, exc: OidcError) -> Response:
    response: Response
    if _wants_html(request):
        text = html.escape(exc.detail)
        page = (
            "<!doctype html><html><head><meta charset='utf-8'><title>Sign-in failed</title>"
            "</head><body><h1>Sign-in failed</h1>"
            f"<p>{text}</p><p><a href='/'>Back to Pronghorn</a></p></body></html>"
        )
        response = HTMLResponse(page, status_code=exc.status)
    else:
        response = JSONResponse({"detail": exc.detail}, status_code=exc.status)
    _clear_login_cookie(response, request)
    response.headers["Cache-Control"] = "no-store"
    return response


def _clear_login_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(
        COOKIE_NAME, path=COOKIE_PATH, httponly=True, samesite="lax", secure=is_https(request)
    )


@router.get(
    "/login",
    status_code=302,
    response_class=RedirectResponse,
    responses={302: {"description": "To the issuer's sign-in page"}, **errors(400, 403, 404, 502)},
)
async def oidc_login(
    request: Request, next: str | None = None, runtime: AppRuntime = Depends(get_runtime)
) -> Response:
    """Redirect to the issuer's authorization endpoint to sign in."""
    client = _client(runtime)
    target = safe_next(next)
    try:
        start = await client.begin(redirect_uri=callback_url(request, runtime), next_path=target)
    except OidcError as exc:
        log.warning("oidc login could not start: %s", exc.detail)
        return refusal(request, exc)
    response = RedirectResponse(start.authorization_url, status_code=302)
    response.set_cookie(
        COOKIE_NAME,
        start.state_cookie,
        max_age=LIFETIME_S,
        path=COOKIE_PATH,
        httponly=True,
        samesite="lax",  # sent on the issuer's top-level redirect back to us
        secure=is_https(request),
    )
    response.headers["Cache-Control"] = "no-store"
    return response


async def _account(runtime: AppRuntime, identity: OidcIdentity) -> User:
    """The user for the identity, created on first sign-in; the mapped role is applied
    on every sign-in when auth.oidc maps roles (admin_groups / admin_emails)."""
    user = await users.find_or_create_external(
        runtime.db,
        issuer=identity.issuer,
        subject=identity.subject,
        username=identity.username,
        display_name=identity.display_name,
        role=identity.role,
    )
    if user.disabled:
        raise OidcError("sign-in refused: this account is disabled", 403)
    oidc = runtime.config.auth.oidc
    maps_roles = oidc is not None and bool(oidc.admin_groups or oidc.admin_emails)
    if maps_roles and user.role != identity.role:
        try:
            _, user = await users.update(runtime.db, user.id, role=identity.role)
        except AccountError as exc:  # e.g. the last enabled admin keeps the role
            log.warning("oidc role of %s not changed: %s", user.username, exc.detail)
    return user


@router.get(
    "/callback",
    status_code=302,
    response_class=RedirectResponse,
    responses={302: {"description": "Signed in: to `next`"}, **errors(400, 403, 404, 502)},
)
async def oidc_callback(request: Request, runtime: AppRuntime = Depends(get_runtime)) -> Response:
    """Where the issuer sends the browser back: sign in, then redirect to `next`."""
    client = _client(runtime)
    ip = client_ip(request)
    limits = runtime.auth.limits
    await limits.check(ip)
    try:
        params = request.query_params
        if any(len(params.getlist(name)) > 1 for name in SINGLE_PARAMS):
            raise OidcError("the callback repeats a parameter")
        query = {key: params[key] for key in params}
        login = await client.complete(query, request.cookies.get(COOKIE_NAME))
        user = await _account(runtime, login.identity)
    except OidcError as exc:
        if exc.status < 500:
            await limits.failed(ip)
        await audit.record(
            runtime.db,
            "login.failed",
            client_ip=ip,
            detail={"method": "oidc", "reason": exc.detail},
        )
        log.warning("oidc sign-in refused: %s", exc.detail)
        return refusal(request, exc)
    cookie, _ = await sessions.start(runtime.db, user.id, ttl=runtime.auth.session_ttl)
    await audit.record(
        runtime.db,
        "login",
        actor=user.id,
        target=user.username,
        client_ip=ip,
        detail={"method": "oidc", "issuer": login.identity.issuer},
    )
    response = RedirectResponse(login.next_path, status_code=302)
    set_session_cookie(response, cookie, request)
    _clear_login_cookie(response, request)
    response.headers["Cache-Control"] = "no-store"
    return response
