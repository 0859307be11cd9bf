"""The per-call model usage ledger (budgets, token usage by model)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import ColumnElement, case, func, insert, select
from sqlalchemy.engine import Connection

from pronghorn.persistence.tables import model_usage, runs


def append(
    conn: Connection,
    *,
    at: datetime,
    owner_id: str,
    thread_id: str,
    run_id: str,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float,
) -> None:
    conn.execute(
        insert(model_usage).values(
            at=at,
            owner_id=owner_id,
            thread_id=thread_id,
            run_id=run_id,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
        )
    )


def _tokens() -> ColumnElement[int]:
    return model_usage.c.input_tokens + model_usage.c.output_tokens


def spend(
    conn: Connection, *, run_id: str, owner_id: str, day_start: datetime, month_start: datetime
) -> dict[str, tuple[int, float]]:
    """(tokens, cost) of the run, and of the owner since `day_start` / `month_start`."""

    def both(cond: ColumnElement[bool]) -> list[ColumnElement[float]]:
        return [
            func.coalesce(func.sum(case((cond, _tokens()), else_=0)), 0),
            func.coalesce(func.sum(case((cond, model_usage.c.cost_usd), else_=0.0)), 0.0),
        ]

    mine = model_usage.c.owner_id == owner_id
    stmt = select(
        *both(model_usage.c.run_id == run_id),
        *both(mine & (model_usage.c.at >= day_start)),
        *both(mine & (model_usage.c.at >= month_start)),
    ).where((model_usage.c.run_id == run_id) | (mine & (model_usage.c.at >= month_start)))
    row = (conn.execute(stmt)).one()
    return {
        "run": (int(row[0]), float(row[1])),
        "day": (int(row[2]), float(row[3])),
        "month": (int(row[4]), float(row[5])),
    }


def by_model_for_thread(
    conn: Connection, thread_id: str, *, statuses: Collection[str] | None
) -> list[dict[str, object]]:
    """Per model: input/output tokens, cost, calls and runs of a thread's calls; only of
    runs in `statuses` when given."""
    stmt = (
        select(
            model_usage.c.model,
            func.sum(model_usage.c.input_tokens),
            func.sum(model_usage.c.output_tokens),
            func.sum(model_usage.c.cost_usd),
            func.count(),
            func.count(func.distinct(model_usage.c.run_id)),
        )
        .select_from(model_usage.join(runs, runs.c.run_id == model_usage.c.run_id))
        .where(model_usage.c.thread_id == thread_id)
        .group_by(model_usage.c.model)
        .order_by(model_usage.c.model)
    )
    if statuses is not None:
        stmt = stmt.where(runs.c.status.in_(list(statuses)))
    rows = (conn.execute(stmt)).all()
    return [
        {
            "model": r[0],
            "input_tokens": int(r[1] or 0),
            "output_tokens": int(r[2] or 0),
            "tokens": int(r[1] or 0) + int(r[2] or 0),
            "cost_usd": round(float(r[3] or 0.0), 6),
            "llm_calls": int(r[4]),
            "runs": int(r[5]),
        }
        for r in rows
    ]


def active_for_thread(
    conn: Connection, thread_id: str, active_statuses: Collection[str]
) -> dict[str, int]:
    """Tokens and calls so far of the thread's runs still in flight (not yet in the runs'
    own totals, which are written when a run ends)."""
    stmt = (
        select(
            func.coalesce(func.sum(model_usage.c.input_tokens), 0),
            func.coalesce(func.sum(model_usage.c.output_tokens), 0),
            func.count(model_usage.c.id),
            func.count(func.distinct(model_usage.c.run_id)),
        )
        .select_from(model_usage.join(runs, runs.c.run_id == model_usage.c.run_id))
        .where(model_usage.c.thread_id == thread_id, runs.c.status.in_(list(active_statuses)))
    )
    row = (conn.execute(stmt)).one()
    return {
        "input_tokens": int(row[0]),
        "output_tokens": int(row[1]),
        "llm_calls": int(row[2]),
        "runs": int(row[3]),
    }
