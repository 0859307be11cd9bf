"""Strict JSON request bodies, parsed once for every LangGraph API router.

Python's `json` (FastAPI's default) accepts `NaN`/`Infinity`, lone surrogates (`"\\ud800"`)
and any nesting; each of those is stored fine and then breaks every later read (SQLite's
JSON functions reject NaN, orjson cannot encode a lone surrogate or more than 254 levels).
Bodies are therefore parsed with orjson (valid UTF-8, no lone surrogates, no NaN/Infinity)
and walked once for nesting depth and integer range, before any handler runs. A body that
fails answers 422 with the reason and nothing is written.

Routers opt in with `APIRouter(route_class=StrictJSONRoute)`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, cast

import orjson
from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

from pronghorn.runtime.engine.request_fields import INT64_MAX, INT64_MIN

MAX_JSON_DEPTH = 64
"""Deepest nesting of objects/arrays a body may have (the body itself is level 1)."""

PARSE_IN_THREAD_BYTES = 256 * 1024
"""Bodies at least this large are parsed and walked off the event loop."""


class InvalidJSON(ValueError):
    """The body is not strict JSON or breaks a bound; the message says why."""


def _check_tree(doc: object) -> None:
    stack: list[tuple[object, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        children: Iterable[object]
        if isinstance(value, dict):
            children = cast("dict[str, object]", value).values()  # orjson's object
        elif isinstance(value, list):
            children = cast("list[object]", value)
        else:
            if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
                raise InvalidJSON(f"integer {value} is outside the signed 64-bit range")
            continue
        if depth > MAX_JSON_DEPTH:
            raise InvalidJSON(f"nested deeper than {MAX_JSON_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children)


def parse_strict_json(body: bytes) -> object:
    """The parsed body, or InvalidJSON (bad JSON, NaN/Infinity, lone surrogate, too deep...)."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidJSON(
            f"{exc}. Bodies must be strict JSON: UTF-8 without lone surrogates, no NaN or Infinity"
        ) from None
    _check_tree(doc)
    return doc


class StrictJSONRequest(Request):
    async def json(self) -> Any:  # Any: Request.json's signature, which FastAPI calls
        if not hasattr(self, "_json"):
            body = await self.body()
            try:
                if len(body) >= PARSE_IN_THREAD_BYTES:
                    self._json = await asyncio.to_thread(parse_strict_json, body)
                else:
                    self._json = parse_strict_json(body)
            except InvalidJSON as exc:
                raise HTTPException(422, f"Invalid JSON body: {exc}") from None
        return self._json


class StrictJSONRoute(APIRoute):
    """An APIRoute whose JSON body goes through `parse_strict_json`."""

    # Any: APIRoute.get_route_handler's signature (a coroutine's send and yield types)
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict_handler
