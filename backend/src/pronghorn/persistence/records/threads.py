"""A thread as the threads repository returns it (persistence/repos/threads.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pronghorn.persistence.records.json_object import JsonObject


@dataclass(frozen=True, slots=True)
class ThreadRecord:
    """One `threads` row. `values` is the cached state (any JSON; None before the first
    checkpoint), `error` the last run's error (JSON, None when it ended well), `ttl` the
    `{ttl: minutes, strategy}` asked for (None: kept until deleted). Timestamps are as the
    database gives them (naive on SQLite: read them through `repos.common.as_utc`)."""

    thread_id: str
    owner_id: str | None
    status: str
    metadata: JsonObject
    config: JsonObject
    values: object
    interrupts: JsonObject
    error: object
    ttl: JsonObject | None
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    state_updated_at: datetime
