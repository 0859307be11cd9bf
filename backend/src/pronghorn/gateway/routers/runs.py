"""Runs: create, stream, wait, join, cancel, list — thread-bound and stateless."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from typing import cast

from fastapi import APIRouter, Body, Depends, Query, Request, Response
from pydantic import TypeAdapter, ValidationError

from pronghorn.auth.authorizer import Action
from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.errors import ApiError, invalid
from pronghorn.gateway.idempotency import Replayer, idempotent, json_record, replay_json
from pronghorn.gateway.models.bodies import json_body
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.langgraph import Run, RunOutput, RunsCancel, RunSelection
from pronghorn.gateway.models.streams import EventStream, event_stream
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.sse import filter_modes, parse_last_event_id, sse_response
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.gateway.wait_response import RunOutputResponse
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.request_fields import INT64_MAX
from pronghorn.runtime.engine.run_request import (
    STREAM_MODES,
    THREAD_STREAM_MODES,
    RunCreate,
    check_stream_modes,
)
from pronghorn.runtime.events.broker import BrokerUnavailable, Event
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.record_api import run_api
from pronghorn.runtime.services import run_records
from pronghorn.runtime.services.runs import Runs
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/langgraph", tags=["runs"], route_class=StrictJSONRoute)

# Location and Content-Location name a run relative to the LangGraph API root, as the
# reference server does: the SDKs resolve them against their apiUrl (which already ends in
# /api/langgraph), so an absolute path would be requested with the prefix twice.


def _parse(body: object) -> RunCreate:
    if not isinstance(body, dict):
        raise ApiError(422, "Request body must be a JSON object")
    try:
        return RunCreate.model_validate(body)
    except ValidationError as exc:
        raise invalid(exc) from None


def _stateless(req: RunCreate) -> tuple[RunCreate, str | None]:
    """A stateless run that names a thread in ``config.configurable.thread_id`` (as
    DeerFlow's UI and its IM channels do) runs on that thread, creating it when missing
    unless the request says ``if_not_exists: "reject"`` (another user's thread is 404);
    without one it gets a temporary thread of its own."""
    configurable: object = (req.config or {}).get("configurable")
    given: object = (
        cast("dict[str, object]", configurable).get("thread_id")
        if isinstance(configurable, dict)
        else None
    )
    if given is None or given == "":
        return req, None
    if not isinstance(given, str):
        raise ApiError(422, "config.configurable.thread_id must be a string")
    tid = check_uuid(given, "thread")
    if "if_not_exists" not in req.model_fields_set:
        req = req.model_copy(update={"if_not_exists": "create"})
    return req, tid


def _run_paths(job: Job, stateless: bool) -> tuple[str, str]:
    run = f"/threads/{job.thread_id}/runs/{job.run_id}"
    return (f"/runs/{job.run_id}" if stateless else run), run


def _modes_param(values: list[str] | None, allowed: set[str] = STREAM_MODES) -> list[str] | None:
    if not values:
        return None
    out: list[str] = []
    for v in values:
        if v.startswith("["):
            try:
                out.extend(str(x) for x in json.loads(v))
                continue
            except (ValueError, TypeError):
                raise ApiError(422, f"Invalid stream_mode {v!r}") from None
        out.extend(p for p in v.split(",") if p)
    try:
        return check_stream_modes(out, allowed) or None
    except ValueError as exc:
        raise ApiError(422, str(exc)) from None


def _stream_job(runtime: AppRuntime, job: Job, *, stateless: bool) -> Response:
    base, content = _run_paths(job, stateless)
    heartbeat = runtime.config.streaming.heartbeat_s
    cancel = job.request.on_disconnect == "cancel"

    def on_disconnect() -> None:
        if cancel:
            runtime.runs.cancel_soon(job.thread_id, job.run_id)

    return sse_response(
        runtime.broker.subscribe(job.run_id, 0),
        heartbeat_s=heartbeat,
        headers={"Location": f"{base}/stream", "Content-Location": content},
        on_disconnect=on_disconnect,
    )


def _wait_response(
    runtime: AppRuntime, job: Job, *, stateless: bool, cancel_on_disconnect: bool
) -> Response:
    base, content = _run_paths(job, stateless)

    def on_disconnect() -> None:
        if cancel_on_disconnect:
            runtime.runs.cancel_soon(job.thread_id, job.run_id)

    return RunOutputResponse(
        job,
        heartbeat_s=runtime.config.streaming.heartbeat_s,
        headers={"Location": f"{base}/join", "Content-Location": content},
        on_disconnect=on_disconnect,
    )


def _created(job: Job, *, stateless: bool) -> tuple[Response, dict[str, object]]:
    """A created run's answer (the run, with its Content-Location) and its idempotency
    record."""
    _, content = _run_paths(job, stateless)
    response = JSONResponse(run_api(job.run), headers={"Content-Location": content})
    return response, json_record(response)


def _run_record(job: Job, kind: str, stateless: bool) -> dict[str, object]:
    """What a retried /stream or /wait with the same Idempotency-Key re-attaches to."""
    return {"kind": kind, "run_id": job.run_id, "thread_id": job.thread_id, "stateless": stateless}


def _replayer(runtime: AppRuntime, access: Access) -> Replayer:
    async def replay(record: Mapping[str, object]) -> Response:
        if record.get("kind") == "json":
            return await replay_json(record)
        run_id, thread_id = str(record["run_id"]), str(record["thread_id"])
        job = runtime.runs.active(run_id)
        if record["kind"] == "stream":
            await _broker_ready(runtime)
            if job is not None:
                return _stream_job(runtime, job, stateless=bool(record["stateless"]))
            base = (
                f"/runs/{run_id}" if record["stateless"] else f"/threads/{thread_id}/runs/{run_id}"
            )
            return sse_response(
                runtime.broker.subscribe(run_id, 0),
                heartbeat_s=runtime.config.streaming.heartbeat_s,
                headers={
                    "Location": f"{base}/stream",
                    "Content-Location": f"/threads/{thread_id}/runs/{run_id}",
                },
            )
        if job is not None:
            return _wait_response(
                runtime, job, stateless=bool(record["stateless"]), cancel_on_disconnect=False
            )
        return await _join(runtime, access, thread_id, run_id)

    return replay


# -- create ----------------------------------------------------------------------------
@router.post(
    "/threads/{thread_id}/runs",
    response_model=Run,
    responses=errors(400, 404, 409, 422, 429),
    openapi_extra=json_body(RunCreate),
)
async def create_run(
    thread_id: str,
    request: Request,
    body: object = Body(...),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid = check_uuid(thread_id, "thread")
    req = _parse(body)

    async def act() -> tuple[Response, dict[str, object]]:
        job = await Runs(runtime).start(access, tid, req)
        return _created(job, stateless=False)

    return await idempotent(request, runtime, access, act)


@router.post(
    "/threads/{thread_id}/runs/stream",
    response_class=EventStream,
    responses={**event_stream("The run's events"), **errors(400, 404, 409, 422, 429)},
    openapi_extra=json_body(RunCreate),
)
async def stream_run(
    thread_id: str,
    request: Request,
    body: object = Body(...),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid = check_uuid(thread_id, "thread")
    req = _parse(body)

    async def act() -> tuple[Response, dict[str, object]]:
        job = await Runs(runtime).start(access, tid, req)
        return _stream_job(runtime, job, stateless=False), _run_record(job, "stream", False)

    return await idempotent(request, runtime, access, act, _replayer(runtime, access))


@router.post(
    "/threads/{thread_id}/runs/wait",
    response_model=RunOutput,
    responses=errors(400, 404, 409, 422, 429),
    openapi_extra=json_body(RunCreate),
)
async def wait_run(
    thread_id: str,
    request: Request,
    body: object = Body(...),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid = check_uuid(thread_id, "thread")
    req = _parse(body)

    async def act() -> tuple[Response, dict[str, object]]:
        job = await Runs(runtime).start(access, tid, req)
        response = _wait_response(
            runtime, job, stateless=False, cancel_on_disconnect=req.on_disconnect == "cancel"
        )
        return response, _run_record(job, "wait", False)

    return await idempotent(request, runtime, access, act, _replayer(runtime, access))


@router.post(
    "/runs",
    response_model=Run,
    responses=errors(400, 404, 409, 422, 429),
    openapi_extra=json_body(RunCreate),
)
async def create_stateless(
    request: Request,
    body: object = Body(...),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    req, tid = _stateless(_parse(body))

    async def act() -> tuple[Response, dict[str, object]]:
        job = await Runs(runtime).start(access, tid, req)
        return _created(job, stateless=tid is None)

    return await idempotent(request, runtime, access, act)


@router.post(
    "/runs/stream",
    response_class=EventStream,
    responses={**event_stream("The run's events"), **errors(400, 404, 409, 422, 429)},
    openapi_extra=json_body(RunCreate),
)
async def stream_stateless(
    request: Request,
    body: object = Body(...),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    req, tid = _stateless(_parse(body))

    async def act() -> tuple[Response, dict[str, object]]:
        job = await Runs(runtime).start(access, tid, req)
        stateless = tid is None
        return _stream_job(runtime, job, stateless=stateless), _run_record(job, "stream", stateless)

    return await idempotent(request, runtime, access, act, _replayer(runtime, access))


@router.post(
    "/runs/wait",
    response_model=RunOutput,
    responses=errors(400, 404, 409, 422, 429),
    openapi_extra=json_body(RunCreate),
)
async def wait_stateless(
    request: Request,
    body: object = Body(...),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    req, tid = _stateless(_parse(body))

    async def act() -> tuple[Response, dict[str, object]]:
        job = await Runs(runtime).start(access, tid, req)
        stateless = tid is None
        response = _wait_response(
            runtime, job, stateless=stateless, cancel_on_disconnect=req.on_disconnect == "cancel"
        )
        return response, _run_record(job, "wait", stateless)

    return await idempotent(request, runtime, access, act, _replayer(runtime, access))


@router.post(
    "/runs/batch",
    response_model=list[Run],
    responses=errors(400, 404, 409, 422, 429),
    openapi_extra=json_body(TypeAdapter(list[RunCreate])),
)
async def create_batch(
    request: Request,
    body: object = Body(...),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    if not isinstance(body, list):
        raise ApiError(422, "Request body must be a JSON array of runs")
    # validate all before creating any
    requests = [_parse(item) for item in cast("list[object]", body)]

    async def act() -> tuple[Response, dict[str, object]]:
        for req in requests:
            await runtime.runs.precheck(req, access)
        await runtime.runs.check_room(access, len(requests))
        jobs = [await Runs(runtime).start(access, None, req) for req in requests]
        response = JSONResponse([run_api(j.run) for j in jobs])
        return response, json_record(response)

    return await idempotent(request, runtime, access, act)


@router.post(
    "/runs/cancel",
    status_code=204,
    responses=errors(404, 422),
    openapi_extra=json_body(RunsCancel, required=False),
)
async def cancel_many(
    body: object = Body(default=None),
    action: str = Query("interrupt", pattern="^(interrupt|rollback)$"),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    body = body or {}
    if not isinstance(body, dict):
        raise ApiError(422, "Request body must be a JSON object")
    fields = cast("dict[str, object]", body)  # a JSON object's keys are strings
    given_thread = fields.get("thread_id")
    given_runs = fields.get("run_ids")
    status = fields.get("status")
    if given_thread is None and not given_runs and status is None:
        raise ApiError(422, "Give thread_id and run_ids, or status")
    if status is not None and status not in ("pending", "running", "all"):
        raise ApiError(422, "status must be pending, running or all")
    thread_id: str | None = None
    if given_thread is not None:
        thread_id = check_uuid(given_thread, "thread")
        await load_thread(runtime, access, thread_id, "update")
    run_ids: list[str] | None = None
    if given_runs is not None:
        if not isinstance(given_runs, list):
            raise ApiError(422, "run_ids must be a list")
        run_ids = [check_uuid(r, "run") for r in cast("list[object]", given_runs)]
    n = await runtime.runs.cancel_many(
        thread_id=thread_id,
        run_ids=run_ids,
        status=status if isinstance(status, str) else None,
        action=action,
        owner_id=access.owner_scope,
    )
    if n == 0:
        raise ApiError(404, "No pending or running runs matched")
    return Response(status_code=204)


# -- read ------------------------------------------------------------------------------
@router.get(
    "/threads/{thread_id}/runs", response_model=list[RunSelection], responses=errors(404, 422)
)
async def list_runs(
    thread_id: str,
    limit: int = Query(10, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=INT64_MAX),
    status: str | None = Query(None),
    select: list[str] | None = Query(None),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid = check_uuid(thread_id, "thread")
    rows = await run_records.list_runs(
        runtime, access, tid, limit=limit, offset=offset, status=status
    )
    if select:
        rows = [{k: v for k, v in r.items() if k in select} for r in rows]
    return JSONResponse(rows)


async def _get_run(
    runtime: AppRuntime,
    access: Access,
    run_id: str,
    thread_id: str | None,
    action: Action = "read",
) -> Mapping[str, object]:
    """The run if `access` may `action` its thread; 404 for an unknown run and for another
    user's (runs are authorized as their thread)."""
    return await run_records.get_run(runtime, access, run_id, thread_id, action)


@router.get("/threads/{thread_id}/runs/{run_id}", response_model=Run, responses=errors(404, 422))
async def get_run(
    thread_id: str,
    run_id: str,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    run = await _get_run(
        runtime, access, check_uuid(run_id, "run"), check_uuid(thread_id, "thread")
    )
    return JSONResponse(run)


@router.get("/runs/{run_id}", response_model=Run, responses=errors(404, 422))
async def get_stateless_run(
    run_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    return JSONResponse(await _get_run(runtime, access, check_uuid(run_id, "run"), None))


@router.delete(
    "/threads/{thread_id}/runs/{run_id}", status_code=204, responses=errors(404, 409, 422)
)
async def delete_run(
    thread_id: str,
    run_id: str,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid, rid = check_uuid(thread_id, "thread"), check_uuid(run_id, "run")
    await run_records.delete_run(runtime, access, tid, rid)
    return Response(status_code=204)


async def _join(runtime: AppRuntime, access: Access, thread_id: str, run_id: str) -> Response:
    run = await _get_run(runtime, access, run_id, thread_id)  # 404 unless it is theirs
    job = runtime.runs.active(run_id)
    if job is not None and job.thread_id == thread_id:
        return _wait_response(runtime, job, stateless=False, cancel_on_disconnect=False)
    if run_records.in_flight(run):  # executing in another process
        await _broker_ready(runtime)
        remote = runtime.runs.follow_elsewhere(thread_id, run_id)
        base = f"/threads/{thread_id}/runs/{run_id}"
        return RunOutputResponse(
            remote,
            heartbeat_s=runtime.config.streaming.heartbeat_s,
            headers={"Location": f"{base}/join", "Content-Location": base},
            on_disconnect=remote.stop_following,
        )
    return JSONResponse(await runtime.runs.output(thread_id, run_id))


async def _broker_ready(runtime: AppRuntime) -> None:
    """503 before a stream starts when the broker cannot be reached (Redis away)."""
    if not await runtime.broker.ping():
        raise BrokerUnavailable("The event broker is unreachable; retry shortly")


@router.get(
    "/threads/{thread_id}/runs/{run_id}/join", response_model=RunOutput, responses=errors(404, 422)
)
async def join_run(
    thread_id: str,
    run_id: str,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid, rid = check_uuid(thread_id, "thread"), check_uuid(run_id, "run")
    return await _join(runtime, access, tid, rid)


async def _join_stream(
    runtime: AppRuntime,
    request: Request,
    run: Mapping[str, object],
    stream_mode: list[str] | None,
    cancel_on_disconnect: bool,
) -> Response:
    try:
        after = parse_last_event_id(request.headers.get("last-event-id"))
    except ValueError as exc:
        raise ApiError(422, str(exc)) from None
    run_id, thread_id = str(run["run_id"]), str(run["thread_id"])
    await _broker_ready(runtime)
    # Without Last-Event-ID: only new events of a live run; nothing of a finished one.
    events = runtime.broker.subscribe(run_id, after)
    events = filter_modes(events, _modes_param(stream_mode))

    def on_disconnect() -> None:
        if cancel_on_disconnect:
            runtime.runs.cancel_soon(thread_id, run_id)

    base = f"/threads/{thread_id}/runs/{run_id}"
    return sse_response(
        events,
        heartbeat_s=runtime.config.streaming.heartbeat_s,
        headers={"Location": f"{base}/stream", "Content-Location": base},
        on_disconnect=on_disconnect,
    )


# One route per method, so each gets its own OpenAPI operation id.
@router.get(
    "/threads/{thread_id}/runs/{run_id}/stream",
    response_class=EventStream,
    responses={**event_stream("The run's events"), **errors(404, 422, 503)},
)
@router.post(
    "/threads/{thread_id}/runs/{run_id}/stream",
    response_class=EventStream,
    responses={**event_stream("The run's events"), **errors(404, 422, 503)},
)
async def join_stream(
    thread_id: str,
    run_id: str,
    request: Request,
    stream_mode: list[str] | None = Query(None),
    cancel_on_disconnect: bool = Query(False),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid, rid = check_uuid(thread_id, "thread"), check_uuid(run_id, "run")
    run = await _get_run(runtime, access, rid, tid)
    return await _join_stream(runtime, request, run, stream_mode, cancel_on_disconnect)


@router.get(
    "/runs/{run_id}/stream",
    response_class=EventStream,
    responses={**event_stream("The run's events"), **errors(404, 422, 503)},
)
async def join_stateless_stream(
    run_id: str,
    request: Request,
    stream_mode: list[str] | None = Query(None),
    cancel_on_disconnect: bool = Query(False),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    run = await _get_run(runtime, access, check_uuid(run_id, "run"), None)
    return await _join_stream(runtime, request, run, stream_mode, cancel_on_disconnect)


@router.post(
    "/threads/{thread_id}/runs/{run_id}/cancel",
    response_model=RunOutput,
    responses={
        202: {"description": "Cancelling (without `wait`)"},
        **errors(404, 409, 422),
    },
)
async def cancel_run(
    thread_id: str,
    run_id: str,
    wait: bool = Query(False),
    action: str = Query("interrupt", pattern="^(interrupt|rollback)$"),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid, rid = check_uuid(thread_id, "thread"), check_uuid(run_id, "run")
    await _get_run(runtime, access, rid, tid, "update")
    job = await runtime.runs.cancel(tid, rid, action=action, wait=wait)
    if not wait:
        return Response(status_code=202)
    if job is not None:
        return JSONResponse(job.output)
    return JSONResponse(await runtime.runs.output(tid, rid))


@router.get(
    "/threads/{thread_id}/stream",
    response_class=EventStream,
    responses={**event_stream("The thread's events"), **errors(404, 422, 503)},
)
async def thread_stream(
    thread_id: str,
    request: Request,
    stream_mode: list[str] | None = Query(None),
    stream_modes: str | None = Query(None),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid = check_uuid(thread_id, "thread")
    await load_thread(runtime, access, tid)
    try:
        after = parse_last_event_id(request.headers.get("last-event-id"), thread=True)
    except ValueError as exc:
        raise ApiError(422, str(exc)) from None
    modes = set(_modes_param(stream_mode, THREAD_STREAM_MODES) or []) | set(
        (_modes_param([stream_modes], THREAD_STREAM_MODES) or []) if stream_modes else []
    )
    await _broker_ready(runtime)
    events = runtime.broker.subscribe_thread(tid, after)
    if modes and "run_modes" not in modes:
        wanted: set[str] = set()
        if "lifecycle" in modes:
            wanted.add("metadata")
        if "state_update" in modes:
            wanted.add("values")

        async def only(source: AsyncGenerator[Event, None] = events) -> AsyncGenerator[Event, None]:
            async for ev in source:
                if ev.event.split("|", 1)[0] in wanted:
                    yield ev

        events = only()
    return sse_response(events, heartbeat_s=runtime.config.streaming.heartbeat_s)
