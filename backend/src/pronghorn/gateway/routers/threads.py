"""The LangGraph Platform threads API (`/threads/...`): CRUD, search, copy, prune, state and
history. Parsing and mapping only: the work is in runtime/services/threads.py and
thread_state.py."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Literal, cast

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from pydantic import AfterValidator, BaseModel, Field, model_validator

from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.idempotency import idempotent, json_record
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.langgraph import (
    Thread,
    ThreadPruneResponse,
    ThreadSelection,
    ThreadState,
    ThreadStateUpdateResponse,
)
from pronghorn.gateway.models.links import THREAD_LINKS
from pronghorn.gateway.paging import page_headers
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine import state as st
from pronghorn.runtime.engine.request_fields import (
    CheckpointDict,
    FilterDict,
    Offset,
    TTLMinutes,
)
from pronghorn.runtime.services import thread_state
from pronghorn.runtime.services import threads as service
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/langgraph/threads", tags=["threads"], route_class=StrictJSONRoute)

Status = Literal["idle", "busy", "interrupted", "error"]
SortBy = Literal["thread_id", "status", "created_at", "updated_at", "state_updated_at"]


_STEP = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")
_EXTRACT_PATH = re.compile(r"(values|metadata|config|interrupts)(\.[^.\[\]]+|\[-?\d{1,18}\])*")


def _bare(path: str) -> str:
    path = path.strip()
    return path[2:] if path.startswith("$.") else path


def _check_extract_path(path: str) -> str:
    if not _EXTRACT_PATH.fullmatch(_bare(path)):
        raise ValueError(
            f"invalid extract path {path!r}: expected values, metadata, config or interrupts "
            "followed by .key and [index] steps, e.g. values.messages[-1]"
        )
    return path


ExtractPath = Annotated[str, AfterValidator(_check_extract_path)]


class TTL(BaseModel):
    """`{ttl: minutes, strategy}`; a bare number means `{ttl: number, strategy: "delete"}`."""

    ttl: TTLMinutes | None = None
    strategy: Literal["delete", "keep_latest"] = "delete"

    @model_validator(mode="before")
    @classmethod
    def _bare_number(cls, value: object) -> object:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"ttl": value}
        return value


def _ttl(value: TTL | None) -> dict[str, object] | None:
    return value.model_dump() if value is not None else None


class ThreadCreate(BaseModel):
    thread_id: str | None = None
    metadata: dict[str, object] | None = None
    graph_id: str | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    ttl: TTL | None = None
    supersteps: list[dict[str, object]] | None = None


class ThreadPatch(BaseModel):
    metadata: dict[str, object] | None = None
    ttl: TTL | None = None


class ThreadCount(BaseModel):
    metadata: dict[str, object] | None = None
    values: dict[str, object] | None = None
    status: Status | None = None


class ThreadSearch(ThreadCount):
    ids: list[str] | None = None
    limit: int = Field(default=10, ge=0, le=1000)
    offset: Offset = 0
    sort_by: SortBy | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[str] | None = None
    extract: dict[str, ExtractPath] | None = Field(default=None, max_length=10)


class ThreadPrune(BaseModel):
    thread_ids: list[str]
    strategy: Literal["delete", "keep_latest"] = "delete"


class StateUpdate(BaseModel):
    values: dict[str, object] | list[object] | None = None
    as_node: str | None = None
    checkpoint: CheckpointDict | None = None
    checkpoint_id: str | None = None


class StateAtCheckpoint(BaseModel):
    checkpoint: CheckpointDict
    subgraphs: bool = False
    select: list[str] | None = None


class HistorySearch(BaseModel):
    limit: int = Field(default=10, ge=1, le=1000)
    before: CheckpointDict | str | None = None
    metadata: FilterDict | None = None
    checkpoint: CheckpointDict | None = None
    select: list[str] | None = None


# --- CRUD --------------------------------------------------------------------------------------


@router.post(
    "",
    response_model=Thread,
    responses={200: {"links": THREAD_LINKS}, **errors(404, 409, 422)},
)
async def create_thread(
    request: Request,
    body: ThreadCreate = Body(default_factory=ThreadCreate),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    new = service.NewThread(
        thread_id=check_uuid(body.thread_id, "thread") if body.thread_id else None,
        metadata=dict(body.metadata or {}),
        graph_id=body.graph_id,
        if_exists=body.if_exists,
        ttl=_ttl(body.ttl),
        supersteps=body.supersteps,
    )

    async def act() -> tuple[Response, dict[str, object]]:
        response = JSONResponse(await service.create(runtime, access, new))
        return response, json_record(response)

    return await idempotent(request, runtime, access, act)


def _extract(doc: Mapping[str, object], path: str) -> object:
    """A small JSON-path subset: `$.a.b`, `a.b[0]`, `values.messages[-1]` (see ExtractPath)."""
    current: object = doc
    for name, index in _STEP.findall(_bare(path)):
        if name:
            current = (
                cast("dict[str, object]", current).get(name) if isinstance(current, dict) else None
            )
        elif isinstance(current, list):
            i = int(index)
            items = cast("list[object]", current)
            current = items[i] if -len(items) <= i < len(items) else None
        else:
            current = None
        if current is None:
            return None
    return current


@router.post("/search", response_model=list[ThreadSelection], responses=errors(422))
async def search_threads(
    body: ThreadSearch = Body(default_factory=ThreadSearch),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    query = service.ThreadQuery(
        metadata=body.metadata,
        values=body.values,
        status=body.status,
        ids=[check_uuid(i, "thread") for i in body.ids] if body.ids is not None else None,
        limit=body.limit,
        offset=body.offset,
        sort_by=body.sort_by,
        sort_order=body.sort_order,
    )
    items, total = await service.search(runtime, access, query, body.model_dump(exclude_none=True))
    out: list[dict[str, object]] = []
    for item in items:
        shown = {k: v for k, v in item.items() if k in body.select} if body.select else dict(item)
        if body.extract:
            shown["extracted"] = {a: _extract(item, p) for a, p in body.extract.items()}
        out.append(shown)
    return JSONResponse(out, headers=page_headers(body.offset, body.limit, len(items), total))


@router.post("/count", response_model=int, responses=errors(422))
async def count_threads(
    body: ThreadCount = Body(default_factory=ThreadCount),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    value = body.model_dump(exclude_none=True)
    query = service.ThreadQuery(metadata=body.metadata, values=body.values, status=body.status)
    return JSONResponse(await service.count(runtime, access, query, value))


@router.post("/prune", response_model=ThreadPruneResponse, responses=errors(422))
async def prune_threads(
    body: ThreadPrune,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    ids = [check_uuid(i, "thread") for i in body.thread_ids]
    pruned = await service.prune(runtime, access, ids, body.strategy)
    return JSONResponse({"pruned_count": pruned})


@router.get("/{thread_id}", response_model=Thread, responses=errors(404, 422))
async def get_thread(
    thread_id: str,
    include: str | None = None,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    fields = {f.strip() for f in (include or "").split(",") if f.strip()}
    tid = check_uuid(thread_id, "thread")
    return JSONResponse(await service.get(runtime, access, tid, ttl="ttl" in fields))


@router.patch(
    "/{thread_id}",
    response_model=Thread,
    responses={204: {"description": "With `Prefer: return=minimal`"}, **errors(404, 422)},
)
async def patch_thread(
    thread_id: str,
    body: ThreadPatch = Body(default_factory=ThreadPatch),
    prefer: str | None = Header(None),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid = check_uuid(thread_id, "thread")
    ttl = _ttl(body.ttl) if "ttl" in body.model_fields_set else service.UNSET
    updated = await service.update(runtime, access, tid, metadata=body.metadata, ttl=ttl)
    if prefer and "return=minimal" in prefer.replace(" ", "").lower():
        return Response(status_code=204)
    return JSONResponse(updated)


@router.delete("/{thread_id}", status_code=204, responses=errors(404, 409, 422))
async def delete_thread(
    thread_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    await service.delete(runtime, access, check_uuid(thread_id, "thread"))
    return Response(status_code=204)


@router.post(
    "/{thread_id}/copy",
    response_model=Thread,
    responses={200: {"links": THREAD_LINKS}, **errors(404, 409, 422)},
)
async def copy(
    thread_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    return JSONResponse(await service.copy(runtime, access, check_uuid(thread_id, "thread")))


# --- state and history -------------------------------------------------------------------------


async def _state(
    runtime: AppRuntime,
    access: Access,
    thread_id: str,
    checkpoint: dict[str, object] | str | None,
    subgraphs: bool,
    select: list[str] | None,
) -> JSONResponse:
    tid = check_uuid(thread_id, "thread")
    state = await thread_state.read_state(runtime, access, tid, checkpoint, subgraphs=subgraphs)
    return JSONResponse(st.select_fields(state, select))


@router.get("/{thread_id}/state", response_model=ThreadState, responses=errors(404, 422))
async def get_state(
    thread_id: str,
    subgraphs: bool = False,
    select: list[str] | None = Query(None),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _state(runtime, access, thread_id, None, subgraphs, select)


@router.get(
    "/{thread_id}/state/{checkpoint_id}", response_model=ThreadState, responses=errors(404, 422)
)
async def get_state_at(
    thread_id: str,
    checkpoint_id: str,
    subgraphs: bool = False,
    select: list[str] | None = Query(None),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _state(runtime, access, thread_id, checkpoint_id, subgraphs, select)


@router.post(
    "/{thread_id}/state/checkpoint", response_model=ThreadState, responses=errors(404, 422)
)
async def post_state_at(
    thread_id: str,
    body: StateAtCheckpoint,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _state(runtime, access, thread_id, body.checkpoint, body.subgraphs, body.select)


@router.post(
    "/{thread_id}/state",
    response_model=ThreadStateUpdateResponse,
    responses=errors(400, 404, 409, 422),
)
async def post_state(
    thread_id: str,
    body: StateUpdate = Body(default_factory=StateUpdate),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    result = await thread_state.update_state(
        runtime,
        access,
        check_uuid(thread_id, "thread"),
        body.values,
        as_node=body.as_node,
        checkpoint=body.checkpoint or body.checkpoint_id,
    )
    return JSONResponse(result)


async def _history(
    runtime: AppRuntime, access: Access, thread_id: str, body: HistorySearch
) -> JSONResponse:
    states = await thread_state.read_history(
        runtime,
        access,
        check_uuid(thread_id, "thread"),
        limit=body.limit,
        before=body.before,
        metadata=body.metadata,
        checkpoint=body.checkpoint,
    )
    return JSONResponse([st.select_fields(s, body.select) for s in states])


@router.post("/{thread_id}/history", response_model=list[ThreadState], responses=errors(404, 422))
async def post_history(
    thread_id: str,
    body: HistorySearch = Body(default_factory=HistorySearch),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _history(runtime, access, thread_id, body)


@router.get("/{thread_id}/history", response_model=list[ThreadState], responses=errors(404, 422))
async def get_history(
    thread_id: str,
    limit: int = Query(10, ge=1, le=1000),
    before: str | None = None,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _history(runtime, access, thread_id, HistorySearch(limit=limit, before=before))
