"""A run as the run repositories return it (persistence/repos/runs.py, run_units.py,
run_claims.py): every column of its `runs` row, typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pronghorn.persistence.records.columns import (
    text_or_none,
    timestamp,
    timestamp_or_none,
    whole,
)
from pronghorn.persistence.records.json_object import JsonObject, json_object

Row = Mapping[Any, object]  # Any: a database row's keys are column names or columns


@dataclass(frozen=True, slots=True)
class RunUsage:
    """The tokens and model calls a run spent (0 until it settles)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    llm_calls: int = 0


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One `runs` row. `kwargs` is the run request as stored (input, config, stream modes...),
    `error` the error it ended with (JSON, None when it did not fail). `owner` is the
    process executing it (None: queued, nobody's), `owner_id` the user it belongs to,
    `principal` who it executes as (JSON); `fence` and `lease_expires_at` its claim
    (scale-out). Timestamps are as the database gives them (naive on SQLite: read them
    through `repos.common.as_utc`)."""

    run_id: str
    thread_id: str
    assistant_id: str
    status: str
    multitask_strategy: str | None
    kwargs: JsonObject
    metadata: JsonObject
    error: object
    cancel_reason: str | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    usage: RunUsage
    temporary: bool
    attempt: int
    owner: str | None
    owner_id: str | None
    principal: JsonObject | None
    fence: int
    lease_expires_at: datetime | None

    @property
    def leased(self) -> bool:
        """Claimed under a lease some replica renews (scale-out)."""
        return self.lease_expires_at is not None


def run_record(row: Row) -> RunRecord:
    """The record of a `runs` row (or of the values a new one is inserted with)."""
    return RunRecord(
        run_id=str(row["run_id"]),
        thread_id=str(row["thread_id"]),
        assistant_id=str(row["assistant_id"]),
        status=str(row["status"]),
        multitask_strategy=text_or_none(row["multitask_strategy"]),
        kwargs=json_object(row["kwargs"]) or {},
        metadata=json_object(row["metadata"]) or {},
        error=row.get("error"),
        cancel_reason=text_or_none(row.get("cancel_reason")),
        created_at=timestamp(row["created_at"]),
        updated_at=timestamp(row["updated_at"]),
        started_at=timestamp_or_none(row.get("started_at")),
        ended_at=timestamp_or_none(row.get("ended_at")),
        usage=RunUsage(
            input_tokens=whole(row.get("input_tokens")),
            output_tokens=whole(row.get("output_tokens")),
            total_tokens=whole(row.get("total_tokens")),
            llm_calls=whole(row.get("llm_calls")),
        ),
        temporary=bool(row.get("temporary")),
        attempt=whole(row.get("attempt")) or 1,
        owner=text_or_none(row.get("owner")),
        owner_id=text_or_none(row.get("owner_id")),
        principal=json_object(row.get("principal")),
        fence=whole(row.get("fence")),
        lease_expires_at=timestamp_or_none(row.get("lease_expires_at")),
    )
