"""Runs: insert, status transitions, listing, recovery queries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from sqlalchemy import Update, and_, delete, func, select, update
from sqlalchemy.engine import Connection

from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.records.runs import RunRecord, run_record
from pronghorn.persistence.repos.common import iso, now
from pronghorn.persistence.tables import runs

INFLIGHT = ("pending", "running")


def new_run_row(
    *,
    run_id: str,
    thread_id: str,
    assistant_id: str,
    kwargs: Mapping[str, object],
    metadata: Mapping[str, object],
    multitask_strategy: str,
    temporary: bool,
    owner: str | None,
    owner_id: str | None = None,
    principal: Mapping[str, object] | None = None,
    created_at: datetime | None = None,
    claimable_at: datetime | None = None,
) -> dict[str, object]:
    """The column values of a new, pending run (`owner`: the process running it;
    `owner_id`: the user it belongs to; `principal`: who it executes as; `claimable_at`:
    when a replica may claim it, scale-out)."""
    ts = created_at or now()
    return {
        "run_id": run_id,
        "thread_id": thread_id,
        "assistant_id": assistant_id,
        "status": "pending",
        "multitask_strategy": multitask_strategy,
        "kwargs": kwargs,
        "metadata": metadata,
        "error": None,
        "cancel_reason": None,
        "attempt": 1,
        "temporary": temporary,
        "owner": owner,
        "owner_id": owner_id,
        "principal": principal,
        "input_tokens": 0,
        "output_tokens": 0,
        "total_tokens": 0,
        "llm_calls": 0,
        "created_at": ts,
        "updated_at": ts,
        "started_at": None,
        "ended_at": None,
        "claimable_at": claimable_at,
        "fence": 0,
        "lease_expires_at": None,
    }


def list_for_thread(
    conn: Connection,
    thread_id: str,
    *,
    limit: int,
    offset: int,
    status: str | None,
) -> list[RunRecord]:
    stmt = select(runs).where(runs.c.thread_id == thread_id)
    if status:
        stmt = stmt.where(runs.c.status == status)
    stmt = stmt.order_by(runs.c.created_at.desc(), runs.c.run_id.desc()).limit(limit).offset(offset)
    return [run_record(r) for r in (conn.execute(stmt)).mappings()]


def list_for_cron(
    conn: Connection, cron_id: str, *, owner_id: str | None, limit: int, offset: int = 0
) -> tuple[list[RunRecord], int]:
    """The runs a cron made (metadata `cron_id`, owned by the cron's owner), newest first,
    and how many there are."""
    where = runs.c.metadata["cron_id"].as_string() == cron_id
    if owner_id is not None:
        where = and_(where, runs.c.owner_id == owner_id)
    total = (conn.execute(select(func.count()).select_from(runs).where(where))).scalar()
    stmt = (
        select(runs)
        .where(where)
        .order_by(runs.c.created_at.desc(), runs.c.run_id.desc())
        .limit(limit)
        .offset(offset)
    )
    return [run_record(r) for r in (conn.execute(stmt)).mappings()], int(total or 0)


def finish_stmt(
    run_id: str,
    *,
    status: str,
    error: Mapping[str, object] | None = None,
    cancel_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
) -> Update:
    ts = now()
    values: dict[str, object] = {
        "status": status,
        "error": error,
        "cancel_reason": cancel_reason,
        "updated_at": ts,
        "ended_at": ts,
    }
    if usage:
        values.update(
            {
                k: int(usage.get(k, 0))
                for k in ("input_tokens", "output_tokens", "total_tokens", "llm_calls")
            }
        )
    return update(runs).where(runs.c.run_id == run_id).values(**values)


def delete_run(conn: Connection, run_id: str) -> int:
    return (conn.execute(delete(runs).where(runs.c.run_id == run_id))).rowcount


def inflight_all(conn: Connection, owner: str | None = None) -> list[RunRecord]:
    stmt = select(runs).where(runs.c.status.in_(INFLIGHT)).order_by(runs.c.created_at)
    if owner is not None:
        stmt = stmt.where(runs.c.owner == owner)
    return [run_record(r) for r in (conn.execute(stmt)).mappings()]


def take_for_resume(conn: Connection, run_id: str, owner: str) -> None:
    """A run left in flight by a dead process, taken by `owner` to resume: `pending` again,
    its next attempt."""
    conn.execute(
        runs.update()
        .where(runs.c.run_id == run_id)
        .values(status="pending", owner=owner, attempt=runs.c.attempt + 1)
    )


def select_for_cancel(
    conn: Connection,
    *,
    thread_id: str | None,
    run_ids: Sequence[str] | None,
    status: str | None,
    assistant_id: str | None = None,
    owner_id: str | None = None,
) -> list[RunRecord]:
    stmt = select(runs)
    if owner_id is not None:
        stmt = stmt.where(runs.c.owner_id == owner_id)
    if thread_id is not None:
        stmt = stmt.where(runs.c.thread_id == thread_id)
    if assistant_id is not None:
        stmt = stmt.where(runs.c.assistant_id == assistant_id)
    if run_ids:
        stmt = stmt.where(runs.c.run_id.in_(list(run_ids)))
    if status in ("pending", "running"):
        stmt = stmt.where(runs.c.status == status)
    else:
        stmt = stmt.where(runs.c.status.in_(INFLIGHT))
    return [run_record(r) for r in (conn.execute(stmt)).mappings()]


def token_usage_for_thread(conn: Connection, thread_id: str) -> dict[str, int]:
    cols = (runs.c.input_tokens, runs.c.output_tokens, runs.c.total_tokens, runs.c.llm_calls)
    row = (
        conn.execute(
            select(*(func.coalesce(func.sum(c), 0) for c in cols)).where(
                runs.c.thread_id == thread_id
            )
        )
    ).first()
    assert row is not None
    return dict(
        zip(
            ("input_tokens", "output_tokens", "total_tokens", "llm_calls"),
            (int(v) for v in row),
            strict=True,
        )
    )


def token_usage_by_run(conn: Connection, thread_id: str) -> list[dict[str, object]]:
    """Per-run token usage of a thread, oldest first (with the model the run named, if any)."""
    stmt = (
        select(
            runs.c.run_id,
            runs.c.status,
            runs.c.kwargs,
            runs.c.created_at,
            runs.c.input_tokens,
            runs.c.output_tokens,
            runs.c.total_tokens,
            runs.c.llm_calls,
        )
        .where(runs.c.thread_id == thread_id)
        .order_by(runs.c.created_at, runs.c.run_id)
    )
    out: list[dict[str, object]] = []
    for row in (conn.execute(stmt)).mappings():
        kwargs = json_object(row["kwargs"]) or {}
        context = json_object(kwargs.get("context")) or {}
        config = json_object(kwargs.get("config")) or {}
        configurable = json_object(config.get("configurable")) or {}
        model = context.get("model_name") or configurable.get("model_name")
        out.append(
            {
                "run_id": row["run_id"],
                "status": row["status"],
                "model_name": model if isinstance(model, str) else None,
                "input_tokens": int(row["input_tokens"] or 0),
                "output_tokens": int(row["output_tokens"] or 0),
                "total_tokens": int(row["total_tokens"] or 0),
                "llm_calls": int(row["llm_calls"] or 0),
                "created_at": iso(row["created_at"]),
            }
        )
    return out
