"""Loopback servers for the MCP tests: an MCP server over streamable HTTP and an OAuth 2
token endpoint, each under uvicorn in a background thread."""

from __future__ import annotations

import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp


class Served:
    """An ASGI app on a free 127.0.0.1 port until `stop()`."""

    def __init__(self, app: ASGIApp, *, lifespan: str = "on") -> None:
        self.app = app
        self.lifespan = lifespan
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Served:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_level="critical",
            access_log=False,
            lifespan=self.lifespan,  # type: ignore[arg-type]
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        if self._sock is not None:
            self._sock.close()

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
