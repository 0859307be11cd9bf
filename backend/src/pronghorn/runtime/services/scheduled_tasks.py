"""DeerFlow's scheduled tasks, as a view of the caller's crons.

A task *is* a cron: made here it is a cron the LangGraph SDK finds (`/runs/crons/search`),
and every cron of the caller is a task here. What a cron has no column for is kept in its
metadata under `scheduled_task` (title, schedule type, DeerFlow's schedule spec); the
prompt is the cron's input message. A `once` task is a cron on that minute, day and month
whose `end_time` is one minute later, so it fires once. A task's run history is the runs
its cron made (their metadata `cron_id`), so a stateless task keeps its threads
(`on_run_completed: keep`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal
from zoneinfo import ZoneInfo

from pronghorn.agent.untyped import as_dict, as_list
from pronghorn.persistence.records.crons import CronRecord
from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos.common import as_utc, iso
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import Conflict, Unprocessable
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.services import crons
from pronghorn.runtime.services.scheduler import fire_cron, validate_schedule

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

META_KEY = "scheduled_task"
DEFAULT_ASSISTANT = "lead_agent"
MAX_TASKS = 1000
ScheduleType = Literal["once", "cron"]

RUN_STATUS = {
    "pending": "queued",
    "running": "running",
    "success": "success",
    "error": "failed",
    "timeout": "failed",
    "interrupted": "interrupted",
}


@dataclass(frozen=True, kw_only=True)
class TaskFields:
    """A task as DeerFlow's screen sends it (create, or a cron merged with a patch)."""

    title: str
    prompt: str
    schedule_type: ScheduleType
    schedule_spec: JsonObject
    timezone: str
    thread_id: str | None
    assistant_id: str = DEFAULT_ASSISTANT


@dataclass(frozen=True)
class Schedule:
    cron: str
    end_time: datetime | None
    spec: dict[str, object]


def _schedule(fields: TaskFields, now: datetime) -> Schedule:
    """The cron expression (and end) of a task's schedule; 422 when it cannot run."""
    try:
        zone = ZoneInfo(fields.timezone)
    except Exception:
        raise Unprocessable(f"Unknown timezone: {fields.timezone!r}") from None
    spec = dict(fields.schedule_spec)
    if fields.schedule_type == "cron":
        expr = spec.get("cron")
        if not isinstance(expr, str):
            raise Unprocessable("A cron schedule needs schedule_spec.cron")
        expr = " ".join(expr.split())
        try:
            validate_schedule(expr, fields.timezone)
        except ValueError as exc:
            raise Unprocessable(str(exc)) from None
        spec["cron"] = expr
        return Schedule(expr, None, spec)
    run_at_raw = spec.get("run_at")
    if not isinstance(run_at_raw, str):
        raise Unprocessable("A once schedule needs schedule_spec.run_at (an ISO date-time)")
    try:
        run_at = datetime.fromisoformat(run_at_raw)
    except ValueError:
        raise Unprocessable(f"schedule_spec.run_at: not an ISO date-time: {run_at_raw!r}") from None
    if run_at.tzinfo is None:  # wall-clock time in the task's timezone
        run_at = run_at.replace(tzinfo=zone)
    local = run_at.astimezone(zone).replace(second=0, microsecond=0)
    if local.astimezone(UTC) <= now:
        raise Unprocessable("A once schedule must be in the future (minute precision)")
    if local.astimezone(UTC) - now > timedelta(days=365):
        raise Unprocessable("A once schedule must be within a year")
    expr = f"{local.minute} {local.hour} {local.day} {local.month} *"
    return Schedule(expr, local.astimezone(UTC) + timedelta(minutes=1), spec)


def _spec(fields: TaskFields, payload: JsonObject | None = None) -> crons.CronSpec:
    schedule = _schedule(fields, datetime.now(UTC))
    base = dict(payload or {})
    base["input"] = {"messages": [{"role": "user", "content": fields.prompt}]}
    meta = {
        META_KEY: {
            "title": fields.title,
            "schedule_type": fields.schedule_type,
            "schedule_spec": schedule.spec,
        }
    }
    return crons.CronSpec(
        assistant_id=fields.assistant_id,
        schedule=schedule.cron,
        timezone=fields.timezone,
        end_time=schedule.end_time,
        enabled=True,
        on_run_completed="keep",
        payload=base,
        metadata=meta,
    )


def _mapping(value: object) -> dict[str, object]:
    """A JSON object as a typed dict ({} for anything else)."""
    return as_dict(value) or {}


def _prompt(payload: JsonObject) -> str:
    """The text of the last message of a cron's input (what an SDK-made cron asks)."""
    messages = as_list(_mapping(_mapping(payload).get("input")).get("messages"))
    if not messages:
        return ""
    content = _mapping(messages[-1]).get("content")
    if isinstance(content, str):
        return content
    blocks = as_list(content)
    if blocks is not None:
        parts = [_mapping(p).get("text", "") for p in blocks]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def _error_text(error: object) -> str | None:
    if error is None:
        return None
    found = _mapping(error)
    if found:
        return str(found.get("message") or found.get("error") or found)
    return str(error)


def _task_fields(cron: CronRecord) -> TaskFields:
    """What DeerFlow's screen shows of a cron's task (its metadata's `scheduled_task`; a
    cron made with the SDK gets a title and a cron schedule of its own)."""
    meta = _mapping(cron.metadata.get(META_KEY))
    schedule_type: ScheduleType = "once" if meta.get("schedule_type") == "once" else "cron"
    spec = json_object(meta.get("schedule_spec"))
    return TaskFields(
        title=str(meta.get("title") or f"{cron.assistant_id} {cron.schedule}"),
        prompt=_prompt(cron.payload),
        schedule_type=schedule_type,
        schedule_spec=spec if spec is not None else {"cron": cron.schedule},
        timezone=cron.timezone or "UTC",
        thread_id=cron.thread_id,
        assistant_id=cron.assistant_id,
    )


def _task(cron: CronRecord, runs: Sequence[RunRecord], run_count: int) -> dict[str, object]:
    """A cron and its newest run, as DeerFlow's `ScheduledTask` (JSON to answer)."""
    fields = _task_fields(cron)
    last = runs[0] if runs else None
    if last is not None and last.status in runs_repo.INFLIGHT:
        status = "running"
    elif not cron.enabled:
        status = "paused"
    elif cron.next_run_date is None:
        status = "completed"
    else:
        status = "enabled"
    return {
        "id": cron.cron_id,
        "thread_id": cron.thread_id,
        "context_mode": "reuse_thread" if cron.thread_id else "fresh_thread_per_run",
        "title": fields.title,
        "prompt": fields.prompt,
        "schedule_type": fields.schedule_type,
        "schedule_spec": fields.schedule_spec,
        "timezone": fields.timezone,
        "status": status,
        "next_run_at": iso(cron.next_run_date) if cron.enabled else None,
        "last_run_at": iso(last.created_at) if last else None,
        "last_run_id": last.run_id if last else None,
        "last_thread_id": last.thread_id if last else None,
        "last_error": _error_text(last.error) if last and last.status == "error" else None,
        "run_count": run_count,
        "created_at": iso(cron.created_at),
        "updated_at": iso(cron.updated_at),
    }


async def _view(runtime: AppRuntime, cron: CronRecord) -> dict[str, object]:
    runs, total = await runtime.db.read(
        lambda conn: runs_repo.list_for_cron(conn, cron.cron_id, owner_id=cron.user_id, limit=1)
    )
    return _task(cron, runs, total)


async def list_tasks(
    runtime: AppRuntime, access: Access, thread_id: str | None = None
) -> list[dict[str, object]]:
    """The caller's crons as tasks, newest first (those on `thread_id` only, if given)."""
    if thread_id is not None:
        await load_thread(runtime, access, thread_id)
    found, _ = await crons.search_rows(
        runtime,
        access,
        assistant_id=None,
        thread_id=thread_id,
        enabled=None,
        metadata=None,
        limit=MAX_TASKS,
        offset=0,
        sort_by="created_at",
        sort_order="desc",
    )
    return [await _view(runtime, cron) for cron in found]


async def get_task(runtime: AppRuntime, access: Access, task_id: str) -> dict[str, object]:
    return await _view(runtime, await crons.get_row(runtime, access, task_id))


async def create_task(runtime: AppRuntime, access: Access, fields: TaskFields) -> dict[str, object]:
    cron = await crons.create_row(runtime, access, _spec(fields), fields.thread_id)
    return await get_task(runtime, access, cron.cron_id)


def _text(changes: Mapping[str, object], key: str, current: str) -> str:
    """A patch's text field (the current one when the patch leaves it out or empty)."""
    value = changes.get(key)
    return value if isinstance(value, str) and value else current


async def update_task(
    runtime: AppRuntime, access: Access, task_id: str, changes: Mapping[str, object]
) -> dict[str, object]:
    """Apply DeerFlow's patch (title, prompt, schedule_spec, timezone). A task's thread is
    the cron's and cannot move: a different one is 422 (delete and re-create)."""
    cron = await crons.get_row(runtime, access, task_id)
    current = _task_fields(cron)
    mode = changes.get("context_mode")
    thread_id = changes.get("thread_id", current.thread_id)
    if mode == "fresh_thread_per_run":
        thread_id = None
    if thread_id != current.thread_id or (mode == "reuse_thread" and thread_id is None):
        raise Unprocessable("A task's thread cannot change: delete it and create a new one")
    fields = TaskFields(
        title=_text(changes, "title", current.title),
        prompt=_text(changes, "prompt", current.prompt),
        schedule_type=current.schedule_type,
        schedule_spec=json_object(changes.get("schedule_spec")) or current.schedule_spec,
        timezone=_text(changes, "timezone", current.timezone),
        thread_id=current.thread_id,
        assistant_id=current.assistant_id,
    )
    spec = _spec(fields, cron.payload)
    metadata = {k: v for k, v in cron.metadata.items() if k != META_KEY}
    keep = replace(
        spec,
        enabled=cron.enabled,
        on_run_completed=cron.on_run_completed,
        metadata={**metadata, **spec.metadata},
    )
    await crons.update(runtime, access, task_id, keep)
    return await get_task(runtime, access, task_id)


async def set_enabled(
    runtime: AppRuntime, access: Access, task_id: str, enabled: bool
) -> dict[str, object]:
    """Pause (the cron is disabled) or resume (enabled; its next time is computed anew)."""
    cron = await crons.get_row(runtime, access, task_id)
    spec = crons.CronSpec(
        assistant_id=cron.assistant_id,
        schedule=cron.schedule,
        timezone=cron.timezone,
        end_time=as_utc(cron.end_time),
        enabled=enabled,
        on_run_completed=cron.on_run_completed,
        payload=cron.payload,
        metadata=cron.metadata,
    )
    await crons.update(runtime, access, task_id, spec)
    return await get_task(runtime, access, task_id)


async def trigger(runtime: AppRuntime, access: Access, task_id: str) -> dict[str, object]:
    """Run the task now, as its owner (409 while a run of it is still going)."""
    row = await crons.get_row(runtime, access, task_id, "update")
    latest, _ = await runtime.db.read(
        lambda conn: runs_repo.list_for_cron(conn, task_id, owner_id=row.owner_id, limit=1)
    )
    if latest and latest[0].status in runs_repo.INFLIGHT:
        raise Conflict("The task is running; trigger it again when its run has finished")
    await fire_cron(runtime, row, trigger="manual")
    return {"id": task_id, "triggered": True}


async def delete_task(runtime: AppRuntime, access: Access, task_id: str) -> dict[str, object]:
    await crons.delete(runtime, access, task_id)
    return {"id": task_id, "deleted": True}


def _run_entry(task_id: str, run: RunRecord) -> dict[str, object]:
    """A run of a cron as DeerFlow's `ScheduledTaskRun` (JSON to answer)."""
    status = RUN_STATUS.get(run.status, "failed")
    return {
        "id": run.run_id,
        "task_id": task_id,
        "thread_id": run.thread_id,
        "run_id": run.run_id,
        "scheduled_for": iso(run.created_at),
        "trigger": "manual" if run.metadata.get("cron_trigger") == "manual" else "scheduled",
        "status": status,
        "error": _error_text(run.error) if status == "failed" else None,
        "started_at": iso(run.started_at),
        "finished_at": iso(run.ended_at),
        "created_at": iso(run.created_at),
    }


async def task_runs(
    runtime: AppRuntime, access: Access, task_id: str, *, limit: int, offset: int
) -> list[dict[str, object]]:
    cron = await crons.get_row(runtime, access, task_id)  # the caller's, or not found
    found, _ = await runtime.db.read(
        lambda conn: runs_repo.list_for_cron(
            conn, task_id, owner_id=cron.user_id, limit=limit, offset=offset
        )
    )
    return [_run_entry(task_id, run) for run in found]
