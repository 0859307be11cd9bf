"""The LangGraph Platform store API (`/store/...`) over the runtime's LangGraph BaseStore."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Literal, cast

from fastapi import APIRouter, Depends, Response
from langgraph.store.base import Item as StoreItem
from langgraph.store.base import SearchItem
from pydantic import AfterValidator, BaseModel, Field

from pronghorn.auth.authorizer import Action
from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.langgraph import Item, ListNamespaceResponse, SearchItemsResponse
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.request_fields import FilterDict, Offset, TTLMinutes
from pronghorn.runtime.owned import authorize
from pronghorn.runtime.services import store_scope as scope
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/langgraph/store", tags=["store"], route_class=StrictJSONRoute)

MAX_NAMESPACE_DEPTH = 2**31 - 1


FILTER_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _check_key(key: str) -> str:
    if "\x00" in key:
        raise ValueError("keys cannot contain NUL characters")
    return key


Key = Annotated[str, AfterValidator(_check_key)]


def _check_operators(filt: dict[str, object]) -> dict[str, object]:
    """An object value is an operator map (`{"$gt": 3}`): only the stores' operators."""
    for key, value in filt.items():
        if not isinstance(value, dict):
            continue
        for op in cast("dict[str, object]", value):  # a JSON object
            if op not in FILTER_OPERATORS:
                raise ValueError(
                    f"filter {key!r}: unsupported operator {op!r}; "
                    f"use one of {', '.join(FILTER_OPERATORS)}"
                )
    return filt


StoreFilter = Annotated[FilterDict, AfterValidator(_check_operators)]


class StorePut(BaseModel):
    namespace: list[str]
    key: Key
    value: dict[str, object]
    index: Literal[False] | list[str] | None = None
    ttl: TTLMinutes | None = None


class StoreDelete(BaseModel):
    namespace: list[str] = Field(default_factory=list)
    key: Key


class StoreSearch(BaseModel):
    namespace_prefix: list[str] | None = None
    filter: StoreFilter | None = None
    limit: int = Field(default=10, ge=0, le=10000)
    offset: Offset = 0
    query: str | None = None
    refresh_ttl: bool | None = None


class StoreNamespaces(BaseModel):
    prefix: list[str] | None = None
    suffix: list[str] | None = None
    max_depth: int | None = Field(default=None, ge=1, le=MAX_NAMESPACE_DEPTH)
    limit: int = Field(default=100, ge=0, le=10000)
    offset: Offset = 0


def check_namespace(
    namespace: list[str] | tuple[str, ...], *, allow_empty: bool = False, writing: bool = False
) -> tuple[str, ...]:
    """422 for what the LangGraph stores refuse: empty labels, labels with dots (the GET form
    joins them with dots) or NUL characters, and (when writing) the reserved root label."""
    if not namespace and not allow_empty:
        raise ApiError(422, "Namespace cannot be empty")
    for label in namespace:
        if not label:  # the models' namespaces are lists of str
            raise ApiError(422, "Namespace labels cannot be empty strings")
        if "." in label:
            raise ApiError(422, f"Namespace labels cannot contain periods ('.'): {label!r}")
        if "\x00" in label:
            raise ApiError(422, f"Namespace labels cannot contain NUL characters: {label!r}")
    if writing and namespace and namespace[0] == "langgraph":
        raise ApiError(422, 'The root namespace label "langgraph" is reserved')
    return tuple(namespace)


def _iso(value: datetime | None) -> str | None:
    """ISO 8601 in UTC (SQLite's store gives naive UTC datetimes)."""
    if value is None:
        return None
    return (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).isoformat()


def item_json(item: StoreItem, namespace: tuple[str, ...] | None = None) -> dict[str, object]:
    out: dict[str, object] = {
        "namespace": list(item.namespace if namespace is None else namespace),
        "key": item.key,
        "value": item.value,
        "created_at": _iso(item.created_at),
        "updated_at": _iso(item.updated_at),
    }
    if isinstance(item, SearchItem):
        out["score"] = item.score
    return out


async def _authorized(
    runtime: AppRuntime,
    access: Access,
    action: Action,
    namespace: tuple[str, ...],
    **fields: object,
) -> tuple[str, ...]:
    """Ask the authorizer (it may rewrite the namespace, as LangGraph's store handlers do)
    and give the namespace as stored in the caller's own space."""
    value: dict[str, object] = {"namespace": namespace, **fields}
    await authorize(runtime, access, "store", action, value)
    edited = value.get("namespace")
    if isinstance(edited, (list, tuple)):
        parts = cast(Sequence[object], edited)
        if all(isinstance(x, str) for x in parts):
            namespace = tuple(str(x) for x in parts)
    return scope.stored(access, namespace)


@router.put("/items", status_code=204, responses=errors(403, 422))
async def put_item(
    body: StorePut, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    namespace = check_namespace(body.namespace, writing=True)
    namespace = await _authorized(runtime, access, "put", namespace, key=body.key, value=body.value)
    kwargs: dict[str, float] = {}
    if body.ttl is not None:
        kwargs["ttl"] = body.ttl
    await runtime.store.aput(namespace, body.key, body.value, index=body.index, **kwargs)
    return Response(status_code=204)


@router.get("/items", response_model=Item | None, responses=errors(403, 422))
async def get_item(
    key: str,
    namespace: str = "",
    refresh_ttl: bool | None = None,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """The item, or `null` for a missing key: the spec documents 200/400/422 only (no 404),
    and the SDK returns None for it."""
    labels = check_namespace(namespace.split(".") if namespace else [])
    if "\x00" in key:
        raise ApiError(422, "key: keys cannot contain NUL characters")
    stored = await _authorized(runtime, access, "get", labels, key=key)
    await runtime.store_sweeper.before_read()
    item = await runtime.store.aget(stored, key, refresh_ttl=refresh_ttl)
    if item is None:
        return JSONResponse(None)
    return JSONResponse(item_json(item, scope.shown(access, item.namespace)))


@router.delete("/items", status_code=204, responses=errors(403, 422))
async def delete_item(
    body: StoreDelete,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    namespace = check_namespace(body.namespace)
    stored = await _authorized(runtime, access, "delete", namespace, key=body.key)
    await runtime.store.adelete(stored, body.key)
    return Response(status_code=204)


@router.post("/items/search", response_model=SearchItemsResponse, responses=errors(403, 422))
async def search_items(
    body: StoreSearch,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    prefix = check_namespace(body.namespace_prefix or [], allow_empty=True)
    stored = await _authorized(
        runtime, access, "search", prefix, filter=body.filter, query=body.query
    )
    await runtime.store_sweeper.before_read()
    items = await runtime.store.asearch(
        stored,
        query=body.query,
        filter=body.filter,
        limit=body.limit,
        offset=body.offset,
        refresh_ttl=body.refresh_ttl,
    )
    out = [item_json(i, ns) for i in items if (ns := scope.shown(access, i.namespace)) is not None]
    return JSONResponse({"items": out})


@router.post("/namespaces", response_model=ListNamespaceResponse, responses=errors(403, 422))
async def list_namespaces(
    body: StoreNamespaces,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    prefix = check_namespace(body.prefix, allow_empty=True) if body.prefix else ()
    suffix = check_namespace(body.suffix, allow_empty=True) if body.suffix else None
    stored = await _authorized(
        runtime, access, "list_namespaces", prefix, suffix=suffix, max_depth=body.max_depth
    )
    await runtime.store_sweeper.before_read()
    namespaces = await runtime.store.alist_namespaces(
        prefix=stored or None,
        suffix=suffix,
        max_depth=scope.depth(access, body.max_depth),
        limit=body.limit,
        offset=body.offset,
    )
    shown = [list(ns) for raw in namespaces if (ns := scope.shown(access, raw))]
    return JSONResponse({"namespaces": shown})
