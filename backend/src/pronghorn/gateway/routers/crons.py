"""Crons: scheduled runs on a thread or stateless (a new thread per run)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pronghorn.gateway.deps import check_uuid, get_runtime
from pronghorn.gateway.errors import ApiError, invalid, not_found
from pronghorn.gateway.paging import page_headers
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.persistence.repos import assistants as assistants_repo
from pronghorn.persistence.repos import crons as crons_repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.repos.common import new_id
from pronghorn.runtime.request_fields import Offset
from pronghorn.runtime.run_request import RunCreate
from pronghorn.runtime.runtime import Runtime
from pronghorn.runtime.scheduler import next_run, validate_schedule
from pronghorn.runtime.webhook import WebhookRefusedError, check_webhook_url

router = APIRouter(prefix="/api/langgraph", tags=["crons"], route_class=StrictJSONRoute)

PAYLOAD_FIELDS = (
    "input",
    "metadata",
    "config",
    "context",
    "interrupt_before",
    "interrupt_after",
    "webhook",
    "multitask_strategy",
    "stream_mode",
    "stream_subgraphs",
    "stream_resumable",
    "durability",
    "checkpoint_during",
)


class CronCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    assistant_id: str = Field(min_length=1)
    schedule: str = Field(min_length=1)
    timezone: str | None = None
    end_time: datetime | None = None
    enabled: bool = True
    on_run_completed: Literal["delete", "keep"] | None = None
    input: Any = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    interrupt_before: list[str] | Literal["*"] | None = None
    interrupt_after: list[str] | Literal["*"] | None = None
    webhook: str | None = None
    multitask_strategy: Literal["reject", "interrupt", "rollback", "enqueue"] | None = None
    stream_mode: list[str] | str | None = None
    stream_subgraphs: bool | None = None
    stream_resumable: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    checkpoint_during: bool | None = None


class CronSearch(BaseModel):
    model_config = ConfigDict(extra="ignore")

    assistant_id: str | None = None
    thread_id: str | None = None
    enabled: bool | None = None
    metadata: dict[str, Any] | None = None
    limit: int = Field(default=10, ge=1, le=1000)
    offset: Offset = 0
    sort_by: str = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: list[str] | None = None


def _check_payload(runtime: Runtime, payload: dict[str, Any], assistant_id: str) -> None:
    """The payload must make a valid run (stream_mode, webhook, …), on create and update."""
    try:
        RunCreate.model_validate({**payload, "assistant_id": assistant_id})
    except ValidationError as exc:
        raise invalid(exc) from None
    webhook = payload.get("webhook")
    if webhook is not None:
        allow = runtime.config.runs.webhook_allow_private_addresses
        try:
            check_webhook_url(webhook, allow_private=allow)
        except WebhookRefusedError as exc:
            raise ApiError(422, str(exc)) from None


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


async def _create(runtime: Runtime, body: CronCreate, thread_id: str | None) -> Response:
    try:
        validate_schedule(body.schedule, body.timezone)
    except ValueError as exc:
        raise ApiError(422, str(exc)) from None
    payload = body.model_dump(include=set(PAYLOAD_FIELDS), exclude_none=True)
    _check_payload(runtime, payload, body.assistant_id)
    now = datetime.now(UTC)
    end = _utc(body.end_time)
    first = next_run(body.schedule, body.timezone, now)
    if end is not None and first >= end:
        first = None
    async with runtime.db.tx() as conn:
        assistant = await assistants_repo.resolve_assistant(conn, body.assistant_id)
        if assistant is None:
            raise not_found("Assistant", body.assistant_id)
        if thread_id is not None and await threads_repo.get_row(conn, thread_id) is None:
            raise not_found("Thread", thread_id)
        cron = await crons_repo.insert_cron(
            conn,
            cron_id=new_id(),
            assistant_id=assistant["assistant_id"],
            thread_id=thread_id,
            schedule=body.schedule,
            timezone=body.timezone,
            end_time=end,
            enabled=body.enabled,
            on_run_completed=(body.on_run_completed or "delete") if thread_id is None else None,
            payload=payload,
            metadata=body.metadata or {},
            user_id=None,
            next_run_date=first,
        )
    _poke(runtime)
    return JSONResponse(cron)


async def _assistant_key(conn: Any, assistant_id: str | None) -> str | None:
    """Search filters accept a graph id too (its system assistant)."""
    if not assistant_id:
        return assistant_id
    assistant = await assistants_repo.resolve_assistant(conn, assistant_id)
    return assistant["assistant_id"] if assistant else assistant_id


def _poke(runtime: Runtime) -> None:
    if runtime.is_started("scheduler"):
        runtime.scheduler.poke()


@router.post("/runs/crons")
async def create_cron(body: CronCreate, runtime: Runtime = Depends(get_runtime)) -> Response:
    return await _create(runtime, body, None)


@router.post("/threads/{thread_id}/runs/crons")
async def create_thread_cron(
    thread_id: str, body: CronCreate, runtime: Runtime = Depends(get_runtime)
) -> Response:
    return await _create(runtime, body, check_uuid(thread_id, "thread"))


@router.post("/runs/crons/search")
async def search_crons(body: CronSearch, runtime: Runtime = Depends(get_runtime)) -> Response:
    async with runtime.db.read() as conn:
        body.assistant_id = await _assistant_key(conn, body.assistant_id)
        items, total = await crons_repo.search(
            conn,
            assistant_id=body.assistant_id,
            thread_id=body.thread_id,
            enabled=body.enabled,
            metadata=body.metadata,
            limit=body.limit,
            offset=body.offset,
            sort_by=body.sort_by,
            sort_order=body.sort_order,
        )
    if body.select:
        items = [{k: v for k, v in i.items() if k in body.select} for i in items]
    return JSONResponse(items, headers=page_headers(body.offset, body.limit, len(items), total))


@router.post("/runs/crons/count")
async def count_crons(
    body: CronSearch | None = None, runtime: Runtime = Depends(get_runtime)
) -> Response:
    body = body or CronSearch()
    async with runtime.db.read() as conn:
        body.assistant_id = await _assistant_key(conn, body.assistant_id)
        n = await crons_repo.count(
            conn, assistant_id=body.assistant_id, thread_id=body.thread_id, metadata=body.metadata
        )
    return JSONResponse(n)


@router.get("/runs/crons/{cron_id}")
async def get_cron(cron_id: str, runtime: Runtime = Depends(get_runtime)) -> Response:
    cid = check_uuid(cron_id, "cron")
    async with runtime.db.read() as conn:
        cron = await crons_repo.get(conn, cid)
    if cron is None:
        raise not_found("Cron", cid)
    return JSONResponse(cron)


@router.patch("/runs/crons/{cron_id}")
async def update_cron(
    cron_id: str, body: dict[str, Any], runtime: Runtime = Depends(get_runtime)
) -> Response:
    cid = check_uuid(cron_id, "cron")
    async with runtime.db.read() as conn:
        current = await crons_repo.get(conn, cid)
    if current is None:
        raise not_found("Cron", cid)
    merged = {
        **current["payload"],
        "assistant_id": current["assistant_id"],
        "schedule": current["schedule"],
        "timezone": current["timezone"],
        "end_time": current["end_time"],
        "enabled": current["enabled"],
        "on_run_completed": current["on_run_completed"],
        "metadata": current["metadata"],
    }
    merged.update(body)  # `end_time: null` clears it
    try:
        new = CronCreate.model_validate(merged)
        validate_schedule(new.schedule, new.timezone)
    except ValidationError as exc:
        raise invalid(exc) from None
    except ValueError as exc:
        raise ApiError(422, str(exc)) from None
    payload = new.model_dump(include=set(PAYLOAD_FIELDS), exclude_none=True)
    _check_payload(runtime, payload, new.assistant_id)
    end = _utc(new.end_time)
    nxt = next_run(new.schedule, new.timezone, datetime.now(UTC))
    if end is not None and nxt >= end:
        nxt = None
    async with runtime.db.tx() as conn:
        if new.assistant_id != current["assistant_id"]:
            assistant = await assistants_repo.resolve_assistant(conn, new.assistant_id)
            if assistant is None:
                raise not_found("Assistant", new.assistant_id)
            new.assistant_id = assistant["assistant_id"]
        await crons_repo.update_cron(
            conn,
            cid,
            assistant_id=new.assistant_id,
            schedule=new.schedule,
            timezone=new.timezone,
            end_time=end,
            enabled=new.enabled,
            on_run_completed=new.on_run_completed if current["thread_id"] is None else None,
            payload=payload,
            metadata=new.metadata or {},
            next_run_date=nxt,
        )
        cron = await crons_repo.get(conn, cid)
    _poke(runtime)
    return JSONResponse(cron)


@router.delete("/runs/crons/{cron_id}", status_code=204)
async def delete_cron(cron_id: str, runtime: Runtime = Depends(get_runtime)) -> Response:
    cid = check_uuid(cron_id, "cron")
    async with runtime.db.tx() as conn:
        if not await crons_repo.delete_cron(conn, cid):
            raise not_found("Cron", cid)
    return Response(status_code=204)
