"""The OpenAPI document: ours plus the custom app's routes, also served under the API root.

``GatewayApp.openapi()`` builds FastAPI's document once and merges in the paths of the
custom ``http.app`` (its own document for a FastAPI app; one operation per method for the
plain routes of a Starlette app). A custom operation replaces a built-in one with the same
path and method, as the custom route takes precedence when serving too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pronghorn.agent.untyped import as_dict, as_list

API_ROOT = "/api/langgraph"


class GatewayApp(FastAPI):
    """FastAPI with the custom app's routes in its OpenAPI document."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # Any: FastAPI's, passed through
        super().__init__(*args, **kwargs)
        self.custom_apps: list[Starlette] = []

    def openapi(self) -> dict[str, Any]:  # Any: FastAPI.openapi's signature
        if self.openapi_schema is None:
            schema = super().openapi()
            for custom in self.custom_apps:
                merge_openapi(schema, custom_openapi(custom))
            self.openapi_schema = schema
        return self.openapi_schema


def custom_openapi(app: Starlette) -> dict[str, object]:
    if isinstance(app, FastAPI):
        return app.openapi()
    paths: dict[str, dict[str, object]] = {}
    for route in app.routes:
        if not isinstance(route, Route) or not route.include_in_schema:
            continue
        for method in sorted((route.methods or set()) - {"HEAD"}):
            paths.setdefault(route.path_format, {})[method.lower()] = {
                "summary": route.name,
                "responses": {"200": {"description": "Successful Response"}},
            }
    return {"paths": paths}


def _member(doc: dict[str, object], key: str) -> dict[str, object]:
    """``doc[key]``, an object of the document (an empty one added when missing)."""
    found = as_dict(doc.setdefault(key, {}))
    if found is None:
        raise TypeError(f"OpenAPI document: {key!r} is not an object")
    return found


def merge_openapi(base: dict[str, object], extra: Mapping[str, object]) -> None:
    """Merge ``extra`` into ``base``: its operations win, its components only add."""
    paths = _member(base, "paths")
    for path, item in (as_dict(extra.get("paths")) or {}).items():
        paths[path] = {**(as_dict(paths.get(path)) or {}), **(as_dict(item) or {})}
    components = _member(base, "components")
    for section, entries in (as_dict(extra.get("components")) or {}).items():
        target = _member(components, section)
        for name, value in (as_dict(entries) or {}).items():
            target.setdefault(name, value)
    base_tags = as_list(base.get("tags")) or []
    known = {(as_dict(t) or {}).get("name") for t in base_tags}
    for tag in as_list(extra.get("tags")) or []:
        if (as_dict(tag) or {}).get("name") not in known:
            tags = as_list(base.setdefault("tags", []))
            if tags is None:
                raise TypeError("OpenAPI document: 'tags' is not a list")
            tags.append(tag)


def serve_under_api_root(app: GatewayApp) -> None:
    """`GET /api/langgraph/openapi.json`: clients given the API root find the spec there."""

    async def openapi_json(request: Request) -> JSONResponse:
        return JSONResponse(app.openapi())

    app.add_route(f"{API_ROOT}/openapi.json", openapi_json, include_in_schema=False)
