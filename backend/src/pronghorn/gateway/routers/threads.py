"""The LangGraph Platform threads API (`/threads/...`): CRUD, search, copy, prune, state and
history. Graph-bound state work happens outside DB transactions (SQLite shares one lock)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator, Mapping
from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter, Body, Depends, Header, Query, Response
from langgraph.errors import InvalidUpdateError
from pydantic import AfterValidator, BaseModel, Field, model_validator

from pronghorn.auth.authorizer import Action
from pronghorn.auth.principal import Principal
from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.errors import ApiError, conflict, not_found
from pronghorn.gateway.paging import page_headers
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.graphs.requests import AccessContext, GraphRequest
from pronghorn.persistence.repos import threads as repo
from pronghorn.persistence.repos.common import OwnerScope, new_id
from pronghorn.runtime import state as st
from pronghorn.runtime.access import Access, graph_user
from pronghorn.runtime.checkpoint_ops import copy_thread, keep_latest_checkpoint
from pronghorn.runtime.errors import NotFound
from pronghorn.runtime.owned import authorize, load_thread, visible
from pronghorn.runtime.request_fields import (
    CheckpointDict,
    FilterDict,
    Offset,
    TTLMinutes,
)
from pronghorn.runtime.runtime import Runtime
from pronghorn.runtime.thread_sweeper import purge_thread
from pronghorn.runtime.threads import while_idle

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
    def _bare_number(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"ttl": value}
        return value


def _ttl(value: TTL | None) -> dict[str, Any] | None:
    return value.model_dump() if value is not None else None


class ThreadCreate(BaseModel):
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None
    graph_id: str | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    ttl: TTL | None = None
    supersteps: list[dict[str, Any]] | None = None


class ThreadPatch(BaseModel):
    metadata: dict[str, Any] | None = None
    ttl: TTL | None = None


class ThreadCount(BaseModel):
    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
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
    values: dict[str, Any] | list[Any] | None = None
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


async def load_row(
    runtime: Runtime,
    access: Access,
    thread_id: str,
    action: Action = "read",
    value: dict[str, object] | None = None,
) -> Any:
    """The thread's row; 404 for an unknown thread and for another user's."""
    tid = check_uuid(thread_id, "thread")
    return await load_thread(runtime, access, tid, action, value)


@contextlib.asynccontextmanager
async def thread_graph(
    runtime: Runtime,
    row: Any,
    access: AccessContext = "threads.read",
    principal: Principal | None = None,
) -> AsyncGenerator[Any, None]:
    """The thread's graph (metadata.graph_id), or None for a thread that never ran."""
    metadata: dict[str, Any] = row["metadata"] or {}
    graph_id: str | None = metadata.get("graph_id")
    if not graph_id:
        yield None
        return
    if graph_id not in runtime.graphs:
        raise ApiError(404, f"Graph '{graph_id}' not found")
    config = {"configurable": {"thread_id": row["thread_id"], "graph_id": graph_id}}
    request = GraphRequest(
        access=access,
        config=config,  # type: ignore[arg-type]
        user=graph_user(principal) if principal is not None else None,
    )
    async with runtime.graphs.graph(graph_id, request) as graph:
        yield graph


async def refresh_cache(runtime: Runtime, thread_id: str, graph: Any) -> None:
    values, interrupts = await st.current_cache(graph, thread_id)
    async with runtime.db.tx() as conn:
        await repo.set_fields(conn, thread_id, values=values, interrupts=interrupts)


@contextlib.contextmanager
def _bad_update() -> Any:
    """An update LangGraph rejects (unknown `as_node`, a value its channels refuse...) is the
    client's error: 400, as the reference answers."""
    try:
        yield
    except (InvalidUpdateError, ValueError, KeyError, TypeError) as exc:
        raise ApiError(400, f"Invalid state update: {exc}") from None


# --- CRUD --------------------------------------------------------------------------------------


@router.post("")
async def create_thread(
    body: ThreadCreate = Body(default_factory=ThreadCreate),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    thread_id = check_uuid(body.thread_id, "thread") if body.thread_id else new_id()
    metadata = dict(body.metadata or {})
    if body.graph_id:
        metadata["graph_id"] = body.graph_id
    value: dict[str, object] = {
        "thread_id": thread_id,
        "metadata": metadata,
        "if_exists": body.if_exists,
        "ttl": _ttl(body.ttl),
    }
    filt = await authorize(runtime, access, "threads", "create", value)
    if isinstance(value.get("metadata"), dict):  # the authorizer may stamp metadata
        metadata = dict(cast(Mapping[str, Any], value["metadata"]))
    if body.supersteps and str(metadata.get("graph_id") or "") not in runtime.graphs:
        raise ApiError(422, "supersteps need a known graph_id (in the body or metadata)")
    ttl, expires_at = repo.ttl_fields(_ttl(body.ttl))
    async with runtime.db.tx() as conn:
        existing = await repo.get_row(conn, thread_id)
        if existing is not None:
            mine = visible(access, existing["owner_id"], existing["metadata"], filt)
            if body.if_exists == "do_nothing" and mine:
                return JSONResponse(repo.to_api(existing))
            raise conflict(f"Thread {thread_id} already exists")
        created = await repo.insert_thread(
            conn,
            thread_id,
            metadata=metadata,
            ttl=ttl,
            expires_at=expires_at,
            owner_id=access.identity,
        )
    if not body.supersteps:
        return JSONResponse(created)
    row = await load_row(runtime, access, thread_id)
    try:
        async with thread_graph(runtime, row, "threads.update", access.principal) as graph:
            with _bad_update():
                await st.apply_supersteps(graph, thread_id, body.supersteps)
            await refresh_cache(runtime, thread_id, graph)
    except BaseException:
        await purge_thread(runtime, thread_id)  # no partial thread on a bad superstep
        raise
    async with runtime.db.read() as conn:
        return JSONResponse(await repo.get(conn, thread_id))


def _extract(doc: dict[str, Any], path: str) -> Any:
    """A small JSON-path subset: `$.a.b`, `a.b[0]`, `values.messages[-1]` (see ExtractPath)."""
    current: Any = doc
    for name, index in _STEP.findall(_bare(path)):
        if name:
            current = (
                cast("dict[str, Any]", current).get(name) if isinstance(current, dict) else None
            )
        elif isinstance(current, list):
            i = int(index)
            items = cast("list[Any]", current)
            current = items[i] if -len(items) <= i < len(items) else None
        else:
            current = None
        if current is None:
            return None
    return current


async def _search_scope(runtime: Runtime, access: Access, value: dict[str, object]) -> OwnerScope:
    """The caller's own threads (every user's for an admin who asked), within the
    authorizer's metadata filter."""
    filt = await authorize(runtime, access, "threads", "search", value)
    return OwnerScope(owner_id=access.owner_scope, filter=filt)


@router.post("/search")
async def search_threads(
    body: ThreadSearch = Body(default_factory=ThreadSearch),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    ids = [check_uuid(i, "thread") for i in body.ids] if body.ids is not None else None
    scope = await _search_scope(runtime, access, body.model_dump(exclude_none=True))
    async with runtime.db.read() as conn:
        items, total = await repo.search(
            conn,
            metadata=body.metadata,
            values=body.values,
            status=body.status,
            ids=ids,
            limit=body.limit,
            offset=body.offset,
            sort_by=body.sort_by,
            sort_order=body.sort_order,
            scope=scope,
        )
    out: list[dict[str, Any]] = []
    for item in items:
        shown = {k: v for k, v in item.items() if k in body.select} if body.select else dict(item)
        if body.extract:
            shown["extracted"] = {a: _extract(item, p) for a, p in body.extract.items()}
        out.append(shown)
    return JSONResponse(out, headers=page_headers(body.offset, body.limit, len(items), total))


@router.post("/count")
async def count_threads(
    body: ThreadCount = Body(default_factory=ThreadCount),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    scope = await _search_scope(runtime, access, body.model_dump(exclude_none=True))
    async with runtime.db.read() as conn:
        total = await repo.count(
            conn, metadata=body.metadata, values=body.values, status=body.status, scope=scope
        )
    return JSONResponse(total)


@router.post("/prune")
async def prune_threads(
    body: ThreadPrune,
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    ids = [check_uuid(i, "thread") for i in body.thread_ids]
    pruned = 0
    for thread_id in ids:
        try:  # unknown and other users' threads are skipped alike
            await load_thread(runtime, access, thread_id, "delete")
        except NotFound:
            continue
        if body.strategy == "keep_latest":
            await keep_latest_checkpoint(runtime.db, runtime.checkpointer, thread_id)
        else:
            await purge_thread(runtime, thread_id)
        pruned += 1
    return JSONResponse({"pruned_count": pruned})


@router.get("/{thread_id}")
async def get_thread(
    thread_id: str,
    include: str | None = None,
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    row = await load_row(runtime, access, thread_id)
    fields = {f.strip() for f in (include or "").split(",") if f.strip()}
    return JSONResponse(repo.to_api(row, include_ttl="ttl" in fields))


@router.patch("/{thread_id}")
async def patch_thread(
    thread_id: str,
    body: ThreadPatch = Body(default_factory=ThreadPatch),
    prefer: str | None = Header(None),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid = check_uuid(thread_id, "thread")
    value: dict[str, object] = {"thread_id": tid, "metadata": dict(body.metadata or {})}
    await load_thread(runtime, access, tid, "update", value)
    if isinstance(value.get("metadata"), dict):
        body.metadata = dict(value["metadata"])  # type: ignore[arg-type]
    ttl = _ttl(body.ttl) if "ttl" in body.model_fields_set else repo.UNSET
    async with runtime.db.tx() as conn:
        updated = await repo.update_thread(conn, tid, metadata=body.metadata, ttl=ttl)
    if updated is None:
        raise not_found("Thread", tid)
    if prefer and "return=minimal" in prefer.replace(" ", "").lower():
        return Response(status_code=204)
    return JSONResponse(updated)


@router.delete("/{thread_id}", status_code=204)
async def delete_thread(
    thread_id: str, runtime: Runtime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    row = await load_row(runtime, access, thread_id, "delete")
    await purge_thread(runtime, row["thread_id"])
    return Response(status_code=204)


@router.post("/{thread_id}/copy")
async def copy(
    thread_id: str, runtime: Runtime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    row = await load_row(runtime, access, thread_id)
    new_thread = new_id()
    # The new thread's row and its checkpoints commit together: all of it or none.
    await copy_thread(
        runtime.db,
        runtime.checkpointer,
        row["thread_id"],
        new_thread,
        with_unit=lambda conn: repo.insert_copy(conn, row, new_thread, access.identity),
    )
    async with runtime.db.read() as conn:
        return JSONResponse(await repo.get(conn, new_thread))


# --- state and history -------------------------------------------------------------------------


async def _state(
    runtime: Runtime,
    access: Access,
    thread_id: str,
    checkpoint: dict[str, Any] | str | None,
    subgraphs: bool,
    select: list[str] | None,
) -> JSONResponse:
    row = await load_row(runtime, access, thread_id)
    async with thread_graph(runtime, row, principal=access.principal) as graph:
        if graph is None:
            if checkpoint:
                raise not_found("Checkpoint", str(checkpoint))
            return JSONResponse(st.empty_state(row["thread_id"]))
        state = await st.read_state(graph, row["thread_id"], checkpoint, subgraphs=subgraphs)
    if state is None:
        raise not_found("Checkpoint", str(checkpoint))
    return JSONResponse(st.select_fields(state, select))


@router.get("/{thread_id}/state")
async def get_state(
    thread_id: str,
    subgraphs: bool = False,
    select: list[str] | None = Query(None),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _state(runtime, access, thread_id, None, subgraphs, select)


@router.get("/{thread_id}/state/{checkpoint_id}")
async def get_state_at(
    thread_id: str,
    checkpoint_id: str,
    subgraphs: bool = False,
    select: list[str] | None = Query(None),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _state(runtime, access, thread_id, checkpoint_id, subgraphs, select)


@router.post("/{thread_id}/state/checkpoint")
async def post_state_at(
    thread_id: str,
    body: StateAtCheckpoint,
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _state(runtime, access, thread_id, body.checkpoint, body.subgraphs, body.select)


@router.post("/{thread_id}/state")
async def post_state(
    thread_id: str,
    body: StateUpdate = Body(default_factory=StateUpdate),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    row = await load_row(runtime, access, thread_id, "update")
    checkpoint: dict[str, Any] | str | None = body.checkpoint or body.checkpoint_id

    async def update() -> dict[str, Any]:
        async with thread_graph(runtime, row, "threads.update", access.principal) as graph:
            if graph is None:
                raise ApiError(
                    400, "Thread has no graph yet: run it first or create it with graph_id"
                )
            with _bad_update():
                result = await st.update_state(
                    graph,
                    row["thread_id"],
                    body.values,
                    as_node=body.as_node,
                    checkpoint=checkpoint,
                )
            await refresh_cache(runtime, row["thread_id"], graph)
        return result

    return JSONResponse(await while_idle(runtime.runs, row, update))


async def _history(
    runtime: Runtime, access: Access, thread_id: str, body: HistorySearch
) -> JSONResponse:
    row = await load_row(runtime, access, thread_id)
    async with thread_graph(runtime, row, principal=access.principal) as graph:
        if graph is None:
            return JSONResponse([])
        states = await st.read_history(
            graph,
            row["thread_id"],
            limit=body.limit,
            before=body.before,
            metadata=body.metadata,
            checkpoint=body.checkpoint,
        )
    return JSONResponse([st.select_fields(s, body.select) for s in states])


@router.post("/{thread_id}/history")
async def post_history(
    thread_id: str,
    body: HistorySearch = Body(default_factory=HistorySearch),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _history(runtime, access, thread_id, body)


@router.get("/{thread_id}/history")
async def get_history(
    thread_id: str,
    limit: int = Query(10, ge=1, le=1000),
    before: str | None = None,
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    return await _history(runtime, access, thread_id, HistorySearch(limit=limit, before=before))
