"""`/api/scheduled-tasks`: DeerFlow's scheduled-task screen, served by the caller's crons
(runtime/services/scheduled_tasks.py; docs/deerflow.md). Another user's task is not found."""

from __future__ import annotations

import uuid
from typing import Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.scheduled_tasks import (
    ScheduledTask,
    ScheduledTaskRun,
    TaskDeleted,
    TaskTriggered,
)
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.services import scheduled_tasks as tasks
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api", tags=["deerflow"], route_class=StrictJSONRoute)


class TaskCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    thread_id: str | None = None
    context_mode: Literal["fresh_thread_per_run", "reuse_thread"] = "fresh_thread_per_run"
    title: str = Field(min_length=1, max_length=255)
    prompt: str = Field(min_length=1, max_length=100_000)
    schedule_type: Literal["once", "cron"]
    schedule_spec: dict[str, object]
    timezone: str = Field(min_length=1, max_length=64)
    assistant_id: str = Field(
        tasks.DEFAULT_ASSISTANT, min_length=1, description="Pronghorn extension: the agent."
    )


class TaskPatch(BaseModel):
    model_config = ConfigDict(extra="ignore")

    context_mode: Literal["fresh_thread_per_run", "reuse_thread"] | None = None
    thread_id: str | None = None
    title: str | None = Field(None, min_length=1, max_length=255)
    prompt: str | None = Field(None, min_length=1, max_length=100_000)
    schedule_spec: dict[str, object] | None = None
    timezone: str | None = Field(None, min_length=1, max_length=64)


def _task_id(task_id: str) -> str:
    try:
        return str(uuid.UUID(task_id))
    except ValueError:
        raise ApiError(404, f"Scheduled task {task_id[:100]!r} not found") from None


@router.get("/scheduled-tasks", response_model=list[ScheduledTask], responses=errors(401))
async def list_tasks(
    runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    return JSONResponse(await tasks.list_tasks(runtime, access))


@router.post("/scheduled-tasks", response_model=ScheduledTask, responses=errors(404, 422))
async def create_task(
    body: TaskCreate,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    thread_id = None
    if body.context_mode == "reuse_thread":
        if not body.thread_id:
            raise ApiError(422, "context_mode reuse_thread needs a thread_id")
        thread_id = check_uuid(body.thread_id, "thread")
    fields = tasks.TaskFields(
        title=body.title,
        prompt=body.prompt,
        schedule_type=body.schedule_type,
        schedule_spec=body.schedule_spec,
        timezone=body.timezone,
        thread_id=thread_id,
        assistant_id=body.assistant_id,
    )
    return JSONResponse(await tasks.create_task(runtime, access, fields))


@router.get("/scheduled-tasks/{task_id}", response_model=ScheduledTask, responses=errors(404))
async def get_task(
    task_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    return JSONResponse(await tasks.get_task(runtime, access, _task_id(task_id)))


@router.patch(
    "/scheduled-tasks/{task_id}", response_model=ScheduledTask, responses=errors(404, 422)
)
async def update_task(
    task_id: str,
    body: TaskPatch,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    changes = body.model_dump(exclude_none=True)
    if changes.get("thread_id"):
        changes["thread_id"] = check_uuid(changes["thread_id"], "thread")
    return JSONResponse(await tasks.update_task(runtime, access, _task_id(task_id), changes))


@router.post(
    "/scheduled-tasks/{task_id}/pause", response_model=ScheduledTask, responses=errors(404)
)
async def pause_task(
    task_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    return JSONResponse(await tasks.set_enabled(runtime, access, _task_id(task_id), False))


@router.post(
    "/scheduled-tasks/{task_id}/resume", response_model=ScheduledTask, responses=errors(404)
)
async def resume_task(
    task_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    return JSONResponse(await tasks.set_enabled(runtime, access, _task_id(task_id), True))


@router.post(
    "/scheduled-tasks/{task_id}/trigger",
    response_model=TaskTriggered,
    responses=errors(404, 409),
)
async def trigger_task(
    task_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """Run the task now (its run history shows it as `manual`)."""
    return JSONResponse(await tasks.trigger(runtime, access, _task_id(task_id)))


@router.delete("/scheduled-tasks/{task_id}", response_model=TaskDeleted, responses=errors(404))
async def delete_task(
    task_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    return JSONResponse(await tasks.delete_task(runtime, access, _task_id(task_id)))


@router.get(
    "/scheduled-tasks/{task_id}/runs",
    response_model=list[ScheduledTaskRun],
    responses=errors(404, 422),
)
async def task_runs(
    task_id: str,
    limit: int = Query(default=50, ge=1, le=200),
    offset: int = Query(default=0, ge=0),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """The runs the task's cron made, newest first."""
    found = await tasks.task_runs(runtime, access, _task_id(task_id), limit=limit, offset=offset)
    return JSONResponse(found)


@router.get(
    "/threads/{thread_id}/scheduled-tasks",
    response_model=list[ScheduledTask],
    responses=errors(404, 422),
)
async def thread_tasks(
    thread_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    tid = check_uuid(thread_id, "thread")
    return JSONResponse(await tasks.list_tasks(runtime, access, thread_id=tid))
