"""The LangGraph Platform assistants API (`/assistants/...`)."""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, cast

from fastapi import APIRouter, Body, Depends, Query, Request, Response
from pydantic import BaseModel, Field

from pronghorn.agent.untyped import as_dict
from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.idempotency import idempotent, json_record
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.langgraph import (
    Assistant,
    AssistantSelection,
    AssistantVersion,
    DrawableGraph,
    GraphSchema,
    Subgraphs,
)
from pronghorn.gateway.models.links import ASSISTANT_LINKS
from pronghorn.gateway.paging import page_headers
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.graphs.registry import AnyGraph
from pronghorn.graphs.requests import GraphRequest
from pronghorn.runtime.access import Access, graph_user
from pronghorn.runtime.engine.graph_access import require_graph
from pronghorn.runtime.engine.request_fields import INT64_MAX, Offset
from pronghorn.runtime.services import assistants as service
from pronghorn.runtime.wiring.app_runtime import AppRuntime

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

router = APIRouter(
    prefix="/api/langgraph/assistants", tags=["assistants"], route_class=StrictJSONRoute
)

SortBy = Literal["assistant_id", "graph_id", "name", "created_at", "updated_at"]


class AssistantCreate(BaseModel):
    graph_id: str
    assistant_id: str | None = None
    config: dict[str, object] | None = None
    context: dict[str, object] | None = None
    metadata: dict[str, object] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    name: str | None = None
    description: str | None = None


class AssistantPatch(BaseModel):
    graph_id: str | None = None
    config: dict[str, object] | None = None
    context: dict[str, object] | None = None
    metadata: dict[str, object] | None = None
    name: str | None = None
    description: str | None = None


class AssistantCount(BaseModel):
    metadata: dict[str, object] | None = None
    graph_id: str | None = None
    name: str | None = None


class AssistantSearch(AssistantCount):
    limit: int = Field(default=10, ge=0, le=1000)
    offset: Offset = 0
    sort_by: SortBy | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[str] | None = None


class VersionsSearch(BaseModel):
    metadata: dict[str, object] | None = None
    limit: int = Field(default=10, ge=0, le=1000)
    offset: Offset = 0


class SetLatest(BaseModel):
    version: int | None = Field(default=None, ge=1, le=INT64_MAX)


def _select(
    items: Sequence[Mapping[str, object]], select: list[str] | None
) -> Sequence[Mapping[str, object]]:
    if not select:
        return items
    return [{k: v for k, v in item.items() if k in select} for item in items]


@router.post(
    "",
    response_model=Assistant,
    responses={200: {"links": ASSISTANT_LINKS}, **errors(404, 409, 422)},
)
async def create_assistant(
    request: Request,
    body: AssistantCreate,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    assistant_id = check_uuid(body.assistant_id, "assistant") if body.assistant_id else None

    async def act() -> tuple[Response, dict[str, object]]:
        created = await service.create(
            runtime,
            access,
            graph_id=body.graph_id,
            assistant_id=assistant_id,
            config=body.config or {},
            context=body.context or {},
            metadata=body.metadata or {},
            if_exists=body.if_exists,
            name=body.name or "Untitled",
            description=body.description,
        )
        response = JSONResponse(created)
        return response, json_record(response)

    return await idempotent(request, runtime, access, act)


@router.post("/search", response_model=list[AssistantSelection], responses=errors(422))
async def search_assistants(
    body: AssistantSearch = Body(default_factory=AssistantSearch),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    # Unknown graph_id: an empty list (the reference answers 404 here, see docs/api.md).
    items, total = await service.search(
        runtime,
        access,
        metadata=body.metadata,
        graph_id=body.graph_id,
        name=body.name,
        limit=body.limit,
        offset=body.offset,
        sort_by=body.sort_by,
        sort_order=body.sort_order,
    )
    return JSONResponse(
        _select(items, body.select),
        headers=page_headers(body.offset, body.limit, len(items), total),
    )


@router.post("/count", response_model=int, responses=errors(422))
async def count_assistants(
    body: AssistantCount = Body(default_factory=AssistantCount),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    total = await service.count(
        runtime, access, metadata=body.metadata, graph_id=body.graph_id, name=body.name
    )
    return JSONResponse(total)


@router.get("/{assistant_id}", response_model=Assistant, responses=errors(404, 422))
async def get_assistant(
    assistant_id: str,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return JSONResponse(await service.get(runtime, access, assistant_id))


@router.patch("/{assistant_id}", response_model=Assistant, responses=errors(404, 422))
async def patch_assistant(
    assistant_id: str,
    body: AssistantPatch = Body(default_factory=AssistantPatch),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    updated = await service.update(
        runtime,
        access,
        assistant_id,
        graph_id=body.graph_id,
        config=body.config,
        context=body.context,
        metadata=body.metadata,
        name=body.name,
        description=body.description,
    )
    return JSONResponse(updated)


@router.delete("/{assistant_id}", status_code=204, responses=errors(404, 409, 422))
async def delete_assistant(
    assistant_id: str,
    delete_threads: bool = False,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    await service.delete(runtime, access, assistant_id, delete_threads=delete_threads)
    return Response(status_code=204)


@router.post(
    "/{assistant_id}/versions", response_model=list[AssistantVersion], responses=errors(404, 422)
)
async def list_versions(
    assistant_id: str,
    body: VersionsSearch = Body(default_factory=VersionsSearch),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    found = await service.versions(
        runtime, access, assistant_id, metadata=body.metadata, limit=body.limit, offset=body.offset
    )
    return JSONResponse(found)


@router.post("/{assistant_id}/latest", response_model=Assistant, responses=errors(404, 422))
async def set_latest(
    assistant_id: str,
    version: int | None = Query(None, ge=1, le=INT64_MAX),
    body: SetLatest | None = Body(None),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    wanted = body.version if body is not None and body.version is not None else version
    if wanted is None:
        raise ApiError(422, "version: Field required")
    return JSONResponse(await service.set_latest(runtime, access, assistant_id, wanted))


# --- graph introspection ----------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _graph_for(
    runtime: AppRuntime, access: Access, assistant_id: str
) -> AsyncGenerator[tuple[Mapping[str, object], AnyGraph]]:
    assistant = await service.get(runtime, access, assistant_id)
    graph_id = str(assistant["graph_id"])
    require_graph(runtime.graphs, graph_id)
    config = dict(as_dict(assistant.get("config")) or {})
    config["configurable"] = {
        **(as_dict(config.get("configurable")) or {}),
        "assistant_id": assistant["assistant_id"],
        "graph_id": graph_id,
    }
    request = GraphRequest(
        access="assistants.read",
        config=cast("RunnableConfig", config),  # an assistant's config is a RunnableConfig
        user=graph_user(access.principal),
    )
    async with runtime.graphs.graph(graph_id, request) as graph:
        yield assistant, graph


def _parse_xray(xray: str) -> bool | int:
    """`true`/`false`, or an integer subgraph depth (<= 0 means no subgraphs)."""
    value = xray.strip().lower()
    if value in ("true", "false", ""):
        return value == "true"
    try:
        depth = int(value)
    except ValueError:
        raise ApiError(422, "xray: must be a boolean or an integer") from None
    return depth if depth > 0 else False


@router.get("/{assistant_id}/graph", response_model=DrawableGraph, responses=errors(404, 422))
async def get_graph(
    assistant_id: str,
    xray: str = "false",
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    depth = _parse_xray(xray)
    async with _graph_for(runtime, access, assistant_id) as (_, graph):
        drawable = await graph.aget_graph(xray=depth)
        return JSONResponse(drawable.to_json())


def _schema(fn: Callable[[], dict[str, object] | None]) -> dict[str, object] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Exception:
        return None


def _state_schema(graph: AnyGraph) -> dict[str, object] | None:
    builder = getattr(graph, "builder", None)
    state_schema = getattr(builder, "state_schema", None)
    if state_schema is not None:
        from pydantic import TypeAdapter

        found = _schema(lambda: TypeAdapter(state_schema).json_schema())
        if found is not None:
            return found
    return _schema(graph.get_output_jsonschema)


def graph_schemas(graph: AnyGraph) -> dict[str, object]:
    return {
        "input_schema": _schema(graph.get_input_jsonschema),
        "output_schema": _schema(graph.get_output_jsonschema),
        "state_schema": _state_schema(graph),
        # the API names it config_schema; get_context_jsonschema answers context_schema
        "config_schema": _schema(graph.get_config_jsonschema),  # pyright: ignore[reportDeprecated]
        "context_schema": _schema(graph.get_context_jsonschema),
    }


@router.get("/{assistant_id}/schemas", response_model=GraphSchema, responses=errors(404, 422))
async def get_schemas(
    assistant_id: str,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    async with _graph_for(runtime, access, assistant_id) as (assistant, graph):
        schemas = await asyncio.to_thread(graph_schemas, graph)
        return JSONResponse({"graph_id": assistant["graph_id"], **schemas})


async def _subgraphs(
    runtime: AppRuntime, access: Access, assistant_id: str, namespace: str | None, recurse: bool
) -> JSONResponse:
    async with _graph_for(runtime, access, assistant_id) as (_, graph):
        out: dict[str, object] = {}
        # langgraph types the subgraphs as a bare `PregelProtocol` (no type arguments); a
        # compiled graph's subgraphs are compiled graphs (Pregel), as graph_schemas needs.
        subgraphs = cast(
            "AsyncIterator[tuple[str, AnyGraph]]",
            graph.aget_subgraphs(namespace=namespace, recurse=recurse),  # pyright: ignore[reportUnknownMemberType]
        )
        async for ns, sub in subgraphs:
            out[ns] = await asyncio.to_thread(graph_schemas, sub)
        return JSONResponse(out)


@router.get("/{assistant_id}/subgraphs", response_model=Subgraphs, responses=errors(404, 422))
async def get_subgraphs(
    assistant_id: str,
    recurse: bool = False,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _subgraphs(runtime, access, assistant_id, None, recurse)


@router.get(
    "/{assistant_id}/subgraphs/{namespace}", response_model=Subgraphs, responses=errors(404, 422)
)
async def get_subgraphs_ns(
    assistant_id: str,
    namespace: str,
    recurse: bool = False,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _subgraphs(runtime, access, assistant_id, namespace, recurse)
