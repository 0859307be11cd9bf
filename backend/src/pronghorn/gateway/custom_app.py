"""Custom routes (`http.app` in config, as `http.app` in a langgraph.json).

The custom Starlette or FastAPI app is not mounted as a catch-all: each of its routes is
added in front of ours as a ``CustomRoute`` that matches exactly what the custom route
matches and hands the request to the whole custom app. So its routes take precedence over
built-in ones with the same path and method, everything else (the API, the web UI) is
untouched, Pronghorn's middleware runs first, and the custom app's own middleware,
exception handlers and dependencies still apply. Its lifespan runs inside ours.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.datastructures import URLPath
from starlette.routing import BaseRoute, Match
from starlette.types import Receive, Scope, Send

from pronghorn.gateway.openapi import GatewayApp
from pronghorn.graphs.loading import load_object


class CustomAppError(Exception):
    pass


class CustomRoute(BaseRoute):
    """One route of the custom app, served by the custom app as a whole."""

    def __init__(self, route: BaseRoute, app: Starlette) -> None:
        self.route = route
        self.app = app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, _ = self.route.matches(scope)
        return match, {}  # the custom app routes again and sets its own path params

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    # Any: Starlette's BaseRoute.url_path_for signature (path params of any kind)
    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        return self.route.url_path_for(name, **path_params)

    def __repr__(self) -> str:
        return f"CustomRoute({self.route!r})"


def load_custom_app(spec: str, base_dir: Path) -> Starlette:
    try:
        app = load_object(spec, base_dir)
    except Exception as exc:
        raise CustomAppError(f"http.app {spec!r}: {exc}") from exc
    if not isinstance(app, Starlette):
        raise CustomAppError(
            f"http.app {spec!r} is a {type(app).__name__}, not a Starlette or FastAPI app"
        )
    return app


def _own_docs_paths(custom: Starlette) -> set[str]:
    """A FastAPI app's own /openapi.json and /docs: ours document both apps instead."""
    if not isinstance(custom, FastAPI):
        return set()
    urls = (
        custom.openapi_url,
        custom.docs_url,
        custom.redoc_url,
        custom.swagger_ui_oauth2_redirect_url,
    )
    return {url for url in urls if url}


def add_custom_app(app: GatewayApp, custom: Starlette) -> None:
    """Put the custom app's routes first and list them in the OpenAPI document."""
    skip = _own_docs_paths(custom)
    app.router.routes[:0] = [
        CustomRoute(route, custom)
        for route in custom.routes
        if getattr(route, "path", None) not in skip
    ]
    app.custom_apps.append(custom)
    app.openapi_schema = None


@contextlib.asynccontextmanager
async def custom_lifespan(custom: Starlette) -> AsyncGenerator[Mapping[str, object] | None, None]:
    """The custom app's lifespan (its startup/shutdown handlers, or its `lifespan`)."""
    async with custom.router.lifespan_context(custom) as state:
        yield state
