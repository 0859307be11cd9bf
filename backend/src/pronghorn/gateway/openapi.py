"""The OpenAPI document: ours plus the custom app's routes, also served under the API root.

``GatewayApp.openapi()`` builds FastAPI's document once and merges in the paths of the
custom ``http.app`` (its own document for a FastAPI app; one operation per method for the
plain routes of a Starlette app). A custom operation replaces a built-in one with the same
path and method, as the custom route takes precedence when serving too.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

API_ROOT = "/api/langgraph"


class GatewayApp(FastAPI):
    """FastAPI with the custom app's routes in its OpenAPI document."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.custom_apps: list[Starlette] = []

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            schema = super().openapi()
            for custom in self.custom_apps:
                merge_openapi(schema, custom_openapi(custom))
            self.openapi_schema = schema
        return self.openapi_schema


def custom_openapi(app: Starlette) -> dict[str, Any]:
    if isinstance(app, FastAPI):
        return app.openapi()
    paths: dict[str, Any] = {}
    for route in app.routes:
        if not isinstance(route, Route) or not route.include_in_schema:
            continue
        for method in sorted((route.methods or set()) - {"HEAD"}):
            paths.setdefault(route.path_format, {})[method.lower()] = {
                "summary": route.name,
                "responses": {"200": {"description": "Successful Response"}},
            }
    return {"paths": paths}


def merge_openapi(base: dict[str, Any], extra: dict[str, Any]) -> None:
    """Merge ``extra`` into ``base``: its operations win, its components only add."""
    paths = base.setdefault("paths", {})
    extra_paths: dict[str, dict[str, Any]] = extra.get("paths") or {}
    for path, item in extra_paths.items():
        paths[path] = {**paths.get(path, {}), **item}
    components = base.setdefault("components", {})
    extra_components: dict[str, dict[str, Any]] = extra.get("components") or {}
    for section, entries in extra_components.items():
        target = components.setdefault(section, {})
        for name, value in entries.items():
            target.setdefault(name, value)
    base_tags: list[dict[str, Any]] = base.get("tags") or []
    extra_tags: list[dict[str, Any]] = extra.get("tags") or []
    known = {t.get("name") for t in base_tags}
    for tag in extra_tags:
        if tag.get("name") not in known:
            base.setdefault("tags", []).append(tag)


def serve_under_api_root(app: GatewayApp) -> None:
    """`GET /api/langgraph/openapi.json`: clients given the API root find the spec there."""

    async def openapi_json(request: Request) -> JSONResponse:
        return JSONResponse(app.openapi())

    app.add_route(f"{API_ROOT}/openapi.json", openapi_json, include_in_schema=False)
