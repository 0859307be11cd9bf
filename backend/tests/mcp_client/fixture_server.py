"""A real MCP server (the mcp SDK's FastMCP) for the MCP client tests.

`python fixture_server.py` serves it over stdio; `http_app()` is the same server as a
streamable HTTP app (with an optional bearer token check) for uvicorn.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

import anyio
from mcp.server.fastmcp import FastMCP
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send


def build(extra: int = 0) -> FastMCP:
    server = FastMCP("fixture")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back, upper-cased."""
        return text.upper()

    @server.tool()
    def where() -> str:
        """Where the server runs: its working directory, pid and environment names."""
        return json.dumps({"cwd": os.getcwd(), "pid": os.getpid(), "env": sorted(os.environ)})

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await anyio.Event().wait()
        return "unreachable"

    @server.tool()
    def crash() -> str:
        """The process dies mid-call."""
        os._exit(3)

    for n in range(extra):  # many tools, for the tool_search threshold

        def make(n: int) -> Callable[[str], str]:
            def tool(city: str) -> str:
                return f"weather {n} in {city}: sunny"

            tool.__name__ = f"weather_{n}"
            tool.__doc__ = f"Weather forecast number {n} for a city."
            return tool

        server.tool()(make(n))
    return server


class BearerCheck:
    """Refuses requests without `Authorization: Bearer <a token `accept` approves>`."""

    def __init__(self, app: ASGIApp, accept: Callable[[str], bool]) -> None:
        self.app = app
        self.accept = accept
        self.seen: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = Request(scope).headers.get("authorization", "")
            self.seen.append(header)
            token = header.removeprefix("Bearer ")
            if not header.startswith("Bearer ") or not self.accept(token):
                response: Response = JSONResponse({"error": "invalid_token"}, status_code=401)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(extra: int = 0) -> ASGIApp:
    return build(extra).streamable_http_app()


if __name__ == "__main__":
    extra = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    build(extra).run("stdio")
