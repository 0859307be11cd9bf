"""Crons: scheduled runs on a thread or stateless (a new thread per run)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pronghorn.agent.untyped import as_dict
from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.errors import ApiError, invalid
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.langgraph import Cron, CronSelection
from pronghorn.gateway.paging import page_headers
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.request_fields import Offset
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.engine.webhook import WebhookRefusedError, check_webhook_url
from pronghorn.runtime.services import crons as service
from pronghorn.runtime.services.scheduler import validate_schedule
from pronghorn.runtime.wiring.app_runtime import AppRuntime

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
    input: object = None
    metadata: dict[str, object] | None = None
    config: dict[str, object] | None = None
    context: dict[str, object] | None = None
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
    metadata: dict[str, object] | None = None
    limit: int = Field(default=10, ge=1, le=1000)
    offset: Offset = 0
    sort_by: str = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: list[str] | None = None


def _check_payload(runtime: AppRuntime, payload: dict[str, object], assistant_id: str) -> None:
    """The payload must make a valid run (stream_mode, webhook, …), on create and update."""
    try:
        RunCreate.model_validate({**payload, "assistant_id": assistant_id})
    except ValidationError as exc:
        raise invalid(exc) from None
    webhook = payload.get("webhook")
    if webhook is not None:
        allow = runtime.config.runs.webhook_allow_private_addresses
        try:
            check_webhook_url(str(webhook), allow_private=allow)  # CronCreate's str
        except WebhookRefusedError as exc:
            raise ApiError(422, str(exc)) from None


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _spec(runtime: AppRuntime, body: CronCreate) -> service.CronSpec:
    """The validated cron of a create body (or of a cron merged with a patch)."""
    try:
        validate_schedule(body.schedule, body.timezone)
    except ValueError as exc:
        raise ApiError(422, str(exc)) from None
    payload = body.model_dump(include=set(PAYLOAD_FIELDS), exclude_none=True)
    _check_payload(runtime, payload, body.assistant_id)
    return service.CronSpec(
        assistant_id=body.assistant_id,
        schedule=body.schedule,
        timezone=body.timezone,
        end_time=_utc(body.end_time),
        enabled=body.enabled,
        on_run_completed=body.on_run_completed,
        payload=payload,
        metadata=body.metadata or {},
    )


@router.post("/runs/crons", response_model=Cron, responses=errors(400, 404, 422))
async def create_cron(
    body: CronCreate,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    return JSONResponse(await service.create(runtime, access, _spec(runtime, body), None))


@router.post(
    "/threads/{thread_id}/runs/crons", response_model=Cron, responses=errors(400, 404, 422)
)
async def create_thread_cron(
    thread_id: str,
    body: CronCreate,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    tid = check_uuid(thread_id, "thread")
    return JSONResponse(await service.create(runtime, access, _spec(runtime, body), tid))


@router.post("/runs/crons/search", response_model=list[CronSelection], responses=errors(422))
async def search_crons(
    body: CronSearch,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    items, total = await service.search(
        runtime,
        access,
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


@router.post("/runs/crons/count", response_model=int, responses=errors(422))
async def count_crons(
    body: CronSearch | None = None,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    body = body or CronSearch()
    n = await service.count(
        runtime,
        access,
        assistant_id=body.assistant_id,
        thread_id=body.thread_id,
        metadata=body.metadata,
    )
    return JSONResponse(n)


@router.get("/runs/crons/{cron_id}", response_model=Cron, responses=errors(404, 422))
async def get_cron(
    cron_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    return JSONResponse(await service.get(runtime, access, check_uuid(cron_id, "cron")))


@router.patch("/runs/crons/{cron_id}", response_model=Cron, responses=errors(400, 404, 422))
async def update_cron(
    cron_id: str,
    body: dict[str, object],
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    cid = check_uuid(cron_id, "cron")
    current = await service.get(runtime, access, cid)
    merged: dict[str, object] = {
        **(as_dict(current["payload"]) or {}),
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
    except ValidationError as exc:
        raise invalid(exc) from None
    return JSONResponse(await service.update(runtime, access, cid, _spec(runtime, new)))


@router.delete("/runs/crons/{cron_id}", status_code=204, responses=errors(404, 422))
async def delete_cron(
    cron_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    await service.delete(runtime, access, check_uuid(cron_id, "cron"))
    return Response(status_code=204)
