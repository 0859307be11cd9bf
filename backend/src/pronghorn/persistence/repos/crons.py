"""Crons: rows, search, and the claim that makes each due time fire once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, insert, select, update
from sqlalchemy.engine import Connection, RowMapping

from pronghorn.persistence.metadata_filter import matches, sql_condition
from pronghorn.persistence.repos.common import (
    ANY_OWNER,
    OwnerScope,
    contains,
    iso,
    json_filter,
    now,
)
from pronghorn.persistence.tables import crons

SORTABLE = {
    "cron_id",
    "assistant_id",
    "thread_id",
    "next_run_date",
    "end_time",
    "created_at",
    "updated_at",
}


def to_api(row: Any) -> dict[str, Any]:
    return {
        "cron_id": row["cron_id"],
        "assistant_id": row["assistant_id"],
        "thread_id": row["thread_id"],
        "schedule": row["schedule"],
        "timezone": row["timezone"],
        "end_time": iso(row["end_time"]),
        "enabled": row["enabled"],
        "on_run_completed": row["on_run_completed"],
        "payload": row["payload"] or {},
        "metadata": row["metadata"] or {},
        "user_id": row["user_id"],
        "next_run_date": iso(row["next_run_date"]),
        "created_at": iso(row["created_at"]),
        "updated_at": iso(row["updated_at"]),
    }


def insert_cron(conn: Connection, **values: Any) -> dict[str, Any]:
    ts = now()
    row = {"created_at": ts, "updated_at": ts, **values}
    conn.execute(insert(crons).values(**row))
    return to_api(row)


def get_row(conn: Connection, cron_id: str) -> RowMapping | None:
    return (conn.execute(select(crons).where(crons.c.cron_id == cron_id))).mappings().first()


def get(conn: Connection, cron_id: str) -> dict[str, Any] | None:
    row = get_row(conn, cron_id)
    return to_api(row) if row else None


def update_cron(conn: Connection, cron_id: str, **values: Any) -> bool:
    values["updated_at"] = now()
    result = conn.execute(update(crons).where(crons.c.cron_id == cron_id).values(**values))
    return result.rowcount == 1


def delete_cron(conn: Connection, cron_id: str) -> bool:
    return (conn.execute(delete(crons).where(crons.c.cron_id == cron_id))).rowcount == 1


def _where(
    assistant_id: str | None,
    thread_id: str | None,
    enabled: bool | None,
    metadata: dict[str, Any] | None,
    scope: OwnerScope,
    dialect: str,
) -> tuple[Any, dict[str, Any], dict[str, object]]:
    auth_cond, auth_rest = sql_condition(crons.c.metadata, scope.filter, dialect)
    conds: list[ColumnElement[bool]] = [auth_cond]
    if scope.owner_id is not None:
        conds.append(crons.c.owner_id == scope.owner_id)
    if assistant_id:
        conds.append(crons.c.assistant_id == assistant_id)
    if thread_id:
        conds.append(crons.c.thread_id == thread_id)
    if enabled is not None:
        conds.append(crons.c.enabled == enabled)
    meta_cond, rest = json_filter(crons, "metadata", metadata)
    conds.append(meta_cond)
    return and_(*conds), rest, auth_rest


def search(
    conn: Connection,
    *,
    assistant_id: str | None = None,
    thread_id: str | None = None,
    enabled: bool | None = None,
    metadata: dict[str, Any] | None = None,
    limit: int = 10,
    offset: int = 0,
    sort_by: str = "created_at",
    sort_order: str = "desc",
    scope: OwnerScope = ANY_OWNER,
) -> tuple[list[dict[str, Any]], int]:
    """One page of crons and the total number matching, within `scope`."""
    where, rest, auth_rest = _where(
        assistant_id, thread_id, enabled, metadata, scope, conn.dialect.name
    )
    col = crons.c[sort_by if sort_by in SORTABLE else "created_at"]
    order = col.asc() if sort_order == "asc" else col.desc()
    stmt = select(crons).where(where).order_by(order, crons.c.cron_id)
    if rest or auth_rest:
        rows = [to_api(r) for r in (conn.execute(stmt)).mappings()]
        rows = [
            r for r in rows if contains(r["metadata"], rest) and matches(r["metadata"], auth_rest)
        ]
        return rows[offset : offset + limit], len(rows)
    total = (conn.execute(select(func.count()).select_from(crons).where(where))).scalar()
    rows = (conn.execute(stmt.limit(limit).offset(offset))).mappings()
    return [to_api(r) for r in rows], int(total or 0)


def count(conn: Connection, **filters: Any) -> int:
    return (search(conn, **filters, limit=1))[1]


def due(conn: Connection, at: datetime, limit: int = 100) -> list[dict[str, Any]]:
    stmt = (
        select(crons)
        .where(
            crons.c.enabled.is_(True),
            crons.c.next_run_date.is_not(None),
            crons.c.next_run_date <= at,
        )
        .order_by(crons.c.next_run_date)
        .limit(limit)
    )
    return [dict(r) for r in (conn.execute(stmt)).mappings()]


def claim(conn: Connection, cron_id: str, due_at: datetime, next_at: datetime | None) -> bool:
    """Move next_run_date from `due_at` to `next_at` iff nobody did it first."""
    result = conn.execute(
        update(crons)
        .where(crons.c.cron_id == cron_id, crons.c.next_run_date == due_at)
        .values(next_run_date=next_at, updated_at=now())
    )
    return result.rowcount == 1
