"""Loopback servers for the MCP tests: an MCP server over streamable HTTP and an OAuth 2
token endpoint, each under uvicorn in a background thread."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from support.threaded_server import ThreadedServer


class Served:
    """An ASGI app on a free 127.0.0.1 port until `stop()`."""

    def __init__(self, app: ASGIApp, *, lifespan: Literal["on", "off"] = "on") -> None:
        self.app = app
        self.lifespan: Literal["on", "off"] = lifespan
        self.port = 0
        self._http: ThreadedServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Served:
        self._http = ThreadedServer(self.app, lifespan=self.lifespan, name="MCP server").start()
        self.port = self._http.port
        return self

    def stop(self) -> None:
        if self._http is not None:
            self._http.stop()

    def __enter__(self) -> Served:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class TokenEndpoint:
    """An OAuth 2 token endpoint: client_credentials and refresh_token grants; tokens live
    `expires_in` seconds (as told to the client); records every request's form."""

    client_id: str = "pronghorn"
    client_secret: str = "s3cret"
    refresh_token: str = "r-1"
    expires_in: int = 3600
    rotate: bool = False
    url: str = ""  # set once it is served
    issued: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def valid(self, token: str) -> bool:
        return token in self.issued

    async def _token(self, request: Request) -> JSONResponse:
        form = dict(await request.form())
        self.requests.append(form)
        grant = form.get("grant_type")
        if grant == "client_credentials":
            if (
                form.get("client_id") != self.client_id
                or form.get("client_secret") != self.client_secret
            ):
                return JSONResponse({"error": "invalid_client"}, status_code=401)
        elif grant == "refresh_token":
            if form.get("refresh_token") != self.refresh_token:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
        else:
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        token = secrets.token_urlsafe(12)
        self.issued.append(token)
        body: dict[str, Any] = {
            "access_token": token,
            "token_type": "bearer",
            "expires_in": self.expires_in,
        }
        if grant == "refresh_token" and self.rotate:
            self.refresh_token = f"r-{len(self.issued) + 1}"
            body["refresh_token"] = self.refresh_token
        return JSONResponse(body)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/token", self._token, methods=["POST"])])
