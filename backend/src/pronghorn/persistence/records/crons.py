"""A cron as the crons repository returns it (persistence/repos/crons.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pronghorn.persistence.records.json_object import JsonObject


@dataclass(frozen=True, slots=True)
class CronRecord:
    """One `crons` row: the schedule (`timezone` None: UTC; no firing at or after
    `end_time`), the run it makes (`payload` on `assistant_id`, on `thread_id` or on a
    new thread each time), who made it (`owner_id`; `principal`, the identity its runs
    execute as) and its next due time (None: it fires no more). Timestamps are as the
    database gives them (naive on SQLite: read them through `repos.common.as_utc`)."""

    cron_id: str
    assistant_id: str
    thread_id: str | None
    schedule: str
    timezone: str | None
    end_time: datetime | None
    enabled: bool
    on_run_completed: str | None
    payload: JsonObject
    metadata: JsonObject
    user_id: str | None
    owner_id: str | None
    principal: JsonObject | None
    next_run_date: datetime | None
    created_at: datetime
    updated_at: datetime
