"""DeerFlow's scheduled-task shapes (its `core/scheduled-tasks/types.ts`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class ScheduledTask(BaseModel):
    id: str
    thread_id: str | None
    context_mode: Literal["fresh_thread_per_run", "reuse_thread"]
    title: str
    prompt: str
    schedule_type: Literal["once", "cron"]
    schedule_spec: dict[str, object]
    timezone: str
    status: Literal["enabled", "paused", "running", "completed", "failed", "cancelled"]
    next_run_at: str | None
    last_run_at: str | None
    last_run_id: str | None
    last_thread_id: str | None
    last_error: str | None
    run_count: int
    created_at: str
    updated_at: str


class ScheduledTaskRun(BaseModel):
    id: str
    task_id: str
    thread_id: str
    run_id: str | None
    scheduled_for: str
    trigger: Literal["scheduled", "manual"]
    status: Literal["queued", "running", "success", "failed", "skipped", "interrupted"]
    error: str | None
    started_at: str | None
    finished_at: str | None
    created_at: str


class TaskTriggered(BaseModel):
    id: str
    triggered: bool


class TaskDeleted(BaseModel):
    id: str
    deleted: bool
