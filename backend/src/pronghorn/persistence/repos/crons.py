"""Crons: rows, search, and the claim that makes each due time fire once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import datetime

from sqlalchemy import ColumnElement, and_, delete, func, insert, select, update
from sqlalchemy.engine import Connection

from pronghorn.persistence.errors import CronMissing
from pronghorn.persistence.metadata_filter import matches, sql_condition
from pronghorn.persistence.records.columns import text_or_none, timestamp, timestamp_or_none
from pronghorn.persistence.records.crons import CronRecord
from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.persistence.records.runs import Row
from pronghorn.persistence.repos.common import (
    ANY_OWNER,
    OwnerScope,
    contains,
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


def record_of(row: Row) -> CronRecord:
    """The record of a `crons` row."""
    return CronRecord(
        cron_id=str(row["cron_id"]),
        assistant_id=str(row["assistant_id"]),
        thread_id=text_or_none(row["thread_id"]),
        schedule=str(row["schedule"]),
        timezone=text_or_none(row["timezone"]),
        end_time=timestamp_or_none(row["end_time"]),
        enabled=bool(row["enabled"]),
        on_run_completed=text_or_none(row["on_run_completed"]),
        payload=json_object(row["payload"]) or {},
        metadata=json_object(row["metadata"]) or {},
        user_id=text_or_none(row["user_id"]),
        owner_id=text_or_none(row["owner_id"]),
        principal=json_object(row["principal"]),
        next_run_date=timestamp_or_none(row["next_run_date"]),
        created_at=timestamp(row["created_at"]),
        updated_at=timestamp(row["updated_at"]),
    )


def insert_cron(
    conn: Connection,
    *,
    cron_id: str,
    assistant_id: str,
    thread_id: str | None,
    schedule: str,
    timezone: str | None,
    end_time: datetime | None,
    enabled: bool,
    on_run_completed: str | None,
    payload: JsonObject,
    metadata: JsonObject,
    user_id: str | None,
    owner_id: str | None,
    principal: JsonObject | None,
    next_run_date: datetime | None,
) -> CronRecord:
    """Insert a cron (the fields of `CronRecord`, stamped now) and return it."""
    ts = now()
    cron = CronRecord(
        cron_id=cron_id,
        assistant_id=assistant_id,
        thread_id=thread_id,
        schedule=schedule,
        timezone=timezone,
        end_time=end_time,
        enabled=enabled,
        on_run_completed=on_run_completed,
        payload=payload,
        metadata=metadata,
        user_id=user_id,
        owner_id=owner_id,
        principal=principal,
        next_run_date=next_run_date,
        created_at=ts,
        updated_at=ts,
    )
    conn.execute(insert(crons).values({f.name: getattr(cron, f.name) for f in fields(cron)}))
    return cron


def get_row(conn: Connection, cron_id: str) -> CronRecord | None:
    """The cron (None when unknown)."""
    row = conn.execute(select(crons).where(crons.c.cron_id == cron_id)).mappings().first()
    return None if row is None else record_of(row)


def update_cron(
    conn: Connection,
    cron_id: str,
    *,
    assistant_id: str,
    schedule: str,
    timezone: str | None,
    end_time: datetime | None,
    enabled: bool,
    on_run_completed: str | None,
    payload: JsonObject,
    metadata: JsonObject,
    next_run_date: datetime | None,
) -> CronRecord:
    """Replace the cron's schedule and run; the cron as it is now. `CronMissing` when
    unknown."""
    values = {
        "assistant_id": assistant_id,
        "schedule": schedule,
        "timezone": timezone,
        "end_time": end_time,
        "enabled": enabled,
        "on_run_completed": on_run_completed,
        "payload": payload,
        "metadata": metadata,
        "next_run_date": next_run_date,
        "updated_at": now(),
    }
    result = conn.execute(update(crons).where(crons.c.cron_id == cron_id).values(values))
    cron = get_row(conn, cron_id) if result.rowcount == 1 else None
    if cron is None:
        raise CronMissing(cron_id)
    return cron


def delete_cron(conn: Connection, cron_id: str) -> bool:
    """Delete the cron; whether there was one."""
    return (conn.execute(delete(crons).where(crons.c.cron_id == cron_id))).rowcount == 1


def _where(
    assistant_id: str | None,
    thread_id: str | None,
    enabled: bool | None,
    metadata: Mapping[str, object] | None,
    scope: OwnerScope,
    dialect: str,
) -> tuple[ColumnElement[bool], dict[str, object], dict[str, object]]:
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
    metadata: Mapping[str, object] | None = None,
    limit: int = 10,
    offset: int = 0,
    sort_by: str = "created_at",
    sort_order: str = "desc",
    scope: OwnerScope = ANY_OWNER,
) -> tuple[list[CronRecord], int]:
    """One page of crons and the total number matching, within `scope`."""
    where, rest, auth_rest = _where(
        assistant_id, thread_id, enabled, metadata, scope, conn.dialect.name
    )
    col = crons.c[sort_by if sort_by in SORTABLE else "created_at"]
    order = col.asc() if sort_order == "asc" else col.desc()
    stmt = select(crons).where(where).order_by(order, crons.c.cron_id)
    if rest or auth_rest:
        rows = [record_of(r) for r in (conn.execute(stmt)).mappings()]
        rows = [r for r in rows if contains(r.metadata, rest) and matches(r.metadata, auth_rest)]
        return rows[offset : offset + limit], len(rows)
    total = (conn.execute(select(func.count()).select_from(crons).where(where))).scalar()
    rows = (conn.execute(stmt.limit(limit).offset(offset))).mappings()
    return [record_of(r) for r in rows], int(total or 0)


def count(
    conn: Connection,
    *,
    assistant_id: str | None = None,
    thread_id: str | None = None,
    enabled: bool | None = None,
    metadata: Mapping[str, object] | None = None,
    scope: OwnerScope = ANY_OWNER,
) -> int:
    """How many crons match (the filters of `search`)."""
    found = search(
        conn,
        assistant_id=assistant_id,
        thread_id=thread_id,
        enabled=enabled,
        metadata=metadata,
        limit=1,
        scope=scope,
    )
    return found[1]


def due(conn: Connection, at: datetime, limit: int = 100) -> list[CronRecord]:
    """The enabled crons due at `at`, soonest first."""
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
    return [record_of(r) for r in (conn.execute(stmt)).mappings()]


def claim(conn: Connection, cron_id: str, due_at: datetime, next_at: datetime | None) -> bool:
    """Move next_run_date from `due_at` to `next_at` iff nobody did it first."""
    result = conn.execute(
        update(crons)
        .where(crons.c.cron_id == cron_id, crons.c.next_run_date == due_at)
        .values(next_run_date=next_at, updated_at=now())
    )
    return result.rowcount == 1
