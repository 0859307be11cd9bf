"""The gateway's AuthMiddleware hands a custom handler the real request (scope, query
string) and answers its HTTPException with the status, detail and headers it raised."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pronghorn.auth.custom.authenticate import CustomAuthenticator
from pronghorn.auth.custom.handlers import custom_auth
from pronghorn.auth.principal import Principal
from pronghorn.auth.services import AuthServices
from pronghorn.config.schema.app import AuthConfig, ServerConfig
from pronghorn.gateway.auth_middleware import AuthMiddleware


@dataclass
class Backends:
    authenticator: CustomAuthenticator
    auth: AuthServices = field(
        default_factory=lambda: AuthServices.from_config(AuthConfig(), ServerConfig())
    )


def app_with(auth: Auth) -> Starlette:
    async def whoami(request: Request) -> JSONResponse:
        principal: Principal = request.state.principal
        return JSONResponse({"identity": principal.identity, "extra": dict(principal.extra)})

    app = Starlette(routes=[Route("/api/whoami", whoami)])
    app.state.runtime = Backends(custom_auth(auth, "test").authenticator)
    app.add_middleware(AuthMiddleware)
    return app


def client_for(app: Starlette) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")


async def test_the_handler_sees_the_real_request() -> None:
    auth = Auth()

    @auth.authenticate
    async def who(request: Request, query_params: QueryParams, path: str) -> dict[str, object]:
        return {
            "identity": query_params["as"],
            "path": path,
            "host": request.headers["host"],
            "client": request.client.host if request.client else None,
            "app_is_ours": isinstance(request.app, Starlette),
        }

    async with client_for(app_with(auth)) as http:
        response = await http.get("/api/whoami", params={"as": "carol"})
    assert response.status_code == 200
    assert response.json() == {
        "identity": "carol",
        "extra": {
            "path": "/api/whoami",
            "host": "localhost",
            "client": "127.0.0.1",
            "app_is_ours": True,
        },
    }


async def test_a_raised_status_detail_and_headers_reach_the_client() -> None:
    auth = Auth()

    @auth.authenticate
    async def who(authorization: str | None) -> str:
        if authorization == "Bearer slow":
            raise Auth.exceptions.HTTPException(429, "slow down", headers={"Retry-After": "9"})
        raise Auth.exceptions.HTTPException(401, "who are you", headers={"X-Hint": "token"})

    async with client_for(app_with(auth)) as http:
        slow = await http.get("/api/whoami", headers={"Authorization": "Bearer slow"})
        anonymous = await http.get("/api/whoami")
    assert (slow.status_code, slow.json(), slow.headers["retry-after"]) == (
        429,
        {"detail": "slow down"},
        "9",
    )
    assert (anonymous.status_code, anonymous.json()) == (401, {"detail": "who are you"})
    assert anonymous.headers["x-hint"] == "token"
    assert anonymous.headers["www-authenticate"] == "Bearer"
