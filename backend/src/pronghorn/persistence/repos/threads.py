"""Threads: rows, status transitions, cached state values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any, Final

from sqlalchemy import (
    ColumnElement,
    Update,
    and_,
    delete,
    func,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.engine import Connection

from pronghorn.persistence.errors import ThreadMissing
from pronghorn.persistence.metadata_filter import matches, sql_condition
from pronghorn.persistence.records.columns import text_or_none, timestamp, timestamp_or_none
from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.records.runs import Row
from pronghorn.persistence.records.threads import ThreadRecord
from pronghorn.persistence.repos.common import (
    ANY_OWNER,
    OwnerScope,
    contains,
    json_filter,
    now,
)
from pronghorn.persistence.tables import threads


class Unset(Enum):
    """The type of `UNSET`: a keyword left out (leave the column as it is), as opposed to
    None (clear it)."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET


def record_of(row: Row) -> ThreadRecord:
    """The record of a `threads` row (or of the values a new one is inserted with)."""
    return ThreadRecord(
        thread_id=str(row["thread_id"]),
        owner_id=text_or_none(row["owner_id"]),
        status=str(row["status"]),
        metadata=json_object(row["metadata"]) or {},
        config=json_object(row["config"]) or {},
        values=row["values"],
        interrupts=json_object(row["interrupts"]) or {},
        error=row["error"],
        ttl=json_object(row["ttl"]),
        expires_at=timestamp_or_none(row["expires_at"]),
        created_at=timestamp(row["created_at"]),
        updated_at=timestamp(row["updated_at"]),
        state_updated_at=timestamp(row["state_updated_at"]),
    )


def get_row(conn: Connection, thread_id: str) -> ThreadRecord | None:
    """The thread (None when unknown)."""
    row = conn.execute(select(threads).where(threads.c.thread_id == thread_id)).mappings().first()
    return None if row is None else record_of(row)


def status_of(conn: Connection, thread_id: str, *, lock: bool = False) -> str | None:
    """The thread's status (None if unknown). With ``lock`` the row stays locked (``SELECT …
    FOR UPDATE``) until the transaction ends: a run accepted meanwhile (which locks the row
    too) waits for it, on any replica."""
    query = select(threads.c.status).where(threads.c.thread_id == thread_id)
    if lock:
        query = query.with_for_update()
    return (conn.execute(query)).scalar_one_or_none()


def take_turn(conn: Connection, thread_id: str, *, hold_s: float) -> tuple[str | None, bool]:
    """Scale-out (PostgreSQL): hold an idle thread for a state update until `hold_s` from
    now (database time), or learn why not: (its status, None if unknown; whether another
    update holds it). The row is locked only for this statement pair, not for the update:
    claims skip a thread in its turn and a run accepted meanwhile is queued."""
    in_turn = and_(threads.c.turn_until.is_not(None), threads.c.turn_until > func.now())
    query = select(threads.c.status, in_turn).where(threads.c.thread_id == thread_id)
    row = conn.execute(query.with_for_update()).first()
    if row is None or row[0] == "busy" or row[1]:
        return (None, False) if row is None else (row[0], bool(row[1]))
    until = func.now() + literal(timedelta(seconds=hold_s))
    conn.execute(update(threads).where(threads.c.thread_id == thread_id).values(turn_until=until))
    return row[0], False


def end_turn_stmt(thread_id: str) -> Update:
    return update(threads).where(threads.c.thread_id == thread_id).values(turn_until=None)


def new_thread_row(
    thread_id: str,
    *,
    metadata: Mapping[str, object] | None = None,
    status: str = "idle",
    ttl: Mapping[str, object] | None = None,
    expires_at: datetime | None = None,
    owner_id: str | None = None,
) -> dict[str, object]:
    """The column values of a new thread (`owner_id`: the user it belongs to)."""
    ts = now()
    return {
        "thread_id": thread_id,
        "owner_id": owner_id,
        "status": status,
        "metadata": metadata or {},
        "config": {},
        "values": None,
        "interrupts": {},
        "error": None,
        "ttl": ttl,
        "expires_at": expires_at,
        "created_at": ts,
        "updated_at": ts,
        "state_updated_at": ts,
    }


def insert_thread(
    conn: Connection,
    thread_id: str,
    *,
    metadata: Mapping[str, object] | None = None,
    status: str = "idle",
    ttl: Mapping[str, object] | None = None,
    expires_at: datetime | None = None,
    owner_id: str | None = None,
) -> ThreadRecord:
    """Insert a new thread (see `new_thread_row`) and return it."""
    values = new_thread_row(
        thread_id,
        metadata=metadata,
        status=status,
        ttl=ttl,
        expires_at=expires_at,
        owner_id=owner_id,
    )
    conn.execute(insert(threads).values(**values))
    return record_of(values)


def insert_copy(
    conn: Connection, source: ThreadRecord, thread_id: str, owner_id: str | None
) -> None:
    """Insert thread `thread_id` as a copy of `source`: its metadata and cached state, a
    fresh status and timestamps, owned by `owner_id` (a sync unit, once the checkpoints
    are copied)."""
    values = new_thread_row(thread_id, metadata=dict(source.metadata), owner_id=owner_id)
    values.update(values=source.values, interrupts=source.interrupts)
    conn.execute(insert(threads), values)


def set_fields_stmt(
    thread_id: str,
    *,
    status: str | Unset = UNSET,
    values: object = UNSET,  # the state: any JSON (None too)
    interrupts: Mapping[str, object] | Unset = UNSET,
    error: Mapping[str, object] | Unset | None = UNSET,
    metadata: Mapping[str, object] | Unset = UNSET,
) -> Update:
    """UPDATE of the given fields (state fields also bump state_updated_at)."""
    ts = now()
    changes: dict[str, object] = {"updated_at": ts}
    if status is not UNSET:
        changes["status"] = status
    if metadata is not UNSET:
        changes["metadata"] = metadata
    if error is not UNSET:
        changes["error"] = error
    if values is not UNSET:
        changes["values"] = values
        changes["state_updated_at"] = ts
    if interrupts is not UNSET:
        changes["interrupts"] = interrupts
        changes["state_updated_at"] = ts
    return update(threads).where(threads.c.thread_id == thread_id).values(**changes)


def set_fields(
    conn: Connection,
    thread_id: str,
    *,
    status: str | Unset = UNSET,
    values: object = UNSET,
    interrupts: Mapping[str, object] | Unset = UNSET,
    error: Mapping[str, object] | Unset | None = UNSET,
    metadata: Mapping[str, object] | Unset = UNSET,
) -> None:
    """Update the given fields (see `set_fields_stmt`)."""
    stmt = set_fields_stmt(
        thread_id,
        status=status,
        values=values,
        interrupts=interrupts,
        error=error,
        metadata=metadata,
    )
    conn.execute(stmt)


# --- TTL, search, delete ---------------------------------------------------------------------

THREAD_SORT_FIELDS = ("thread_id", "status", "created_at", "updated_at", "state_updated_at")


def ttl_fields(
    ttl: Mapping[str, object] | None,
) -> tuple[dict[str, object] | None, datetime | None]:
    """``(ttl_json, expires_at)`` for a ``{ttl: minutes, strategy}`` request (None clears)."""
    if not ttl or ttl.get("ttl") is None:
        return None, None
    minutes = _minutes(ttl["ttl"])
    strategy = ttl.get("strategy") or "delete"
    return {"ttl": ttl["ttl"], "strategy": strategy}, now() + timedelta(minutes=minutes)


def _minutes(value: object) -> float:
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"a TTL in minutes was expected, not {value!r}")


def update_thread(
    conn: Connection,
    thread_id: str,
    *,
    metadata: Mapping[str, object] | None = None,
    ttl: Mapping[str, object] | Unset | None = UNSET,
) -> ThreadRecord:
    """PATCH: merge metadata, set (or clear with None) the TTL; `ThreadMissing` when
    unknown."""
    record = get_row(conn, thread_id)
    if record is None:
        raise ThreadMissing(thread_id)
    changes: dict[str, Any] = {"updated_at": now()}  # Any: replace() takes the record's fields
    if metadata:
        changes["metadata"] = {**record.metadata, **metadata}
    if not isinstance(ttl, Unset):
        changes["ttl"], changes["expires_at"] = ttl_fields(ttl)
    conn.execute(update(threads).where(threads.c.thread_id == thread_id).values(**changes))
    return replace(record, **changes)


def delete_thread(conn: Connection, thread_id: str) -> bool:
    """Delete the row (runs, events and thread crons go with it by foreign key)."""
    result = conn.execute(delete(threads).where(threads.c.thread_id == thread_id))
    return bool(result.rowcount)


def _conditions(
    metadata: Mapping[str, object] | None,
    values: Mapping[str, object] | None,
    status: str | None,
    ids: list[str] | None,
    scope: OwnerScope,
    dialect: str,
) -> tuple[list[ColumnElement[bool]], dict[str, object], dict[str, object], dict[str, object]]:
    meta_cond, meta_rest = json_filter(threads, "metadata", metadata)
    values_cond, values_rest = json_filter(threads, "values", values)
    auth_cond, auth_rest = sql_condition(threads.c.metadata, scope.filter, dialect)
    conds: list[ColumnElement[bool]] = [meta_cond, values_cond, auth_cond]
    if scope.owner_id is not None:
        conds.append(threads.c.owner_id == scope.owner_id)
    if status:
        conds.append(threads.c.status == status)
    if ids is not None:
        conds.append(threads.c.thread_id.in_(ids))
    return conds, meta_rest, values_rest, auth_rest


def search_rows(
    conn: Connection,
    *,
    metadata: Mapping[str, object] | None = None,
    values: Mapping[str, object] | None = None,
    status: str | None = None,
    ids: list[str] | None = None,
    limit: int = 10,
    offset: int = 0,
    sort_by: str | None = None,
    sort_order: str | None = None,
    scope: OwnerScope = ANY_OWNER,
    exact_total: bool = True,
) -> tuple[list[ThreadRecord], int]:
    """One page of threads (newest first by default) and the total number matching,
    within `scope` (an owner and the authorizer's metadata filter).

    `exact_total=False` counts nothing: one row past the page is read instead, and the
    total is exact on the last page and `offset + limit + 1` ("at least one more") on the
    others, as the reference server's `X-Pagination-Total` (`count` gives the exact one)."""
    conds, meta_rest, values_rest, auth_rest = _conditions(
        metadata, values, status, ids, scope, conn.dialect.name
    )
    column = threads.c[sort_by if sort_by in THREAD_SORT_FIELDS else "created_at"]
    order = column.asc() if (sort_order or "desc").lower() == "asc" else column.desc()
    query = select(threads).where(and_(*conds)).order_by(order, threads.c.thread_id.desc())
    if meta_rest or values_rest or auth_rest:
        rows = [
            record_of(r)
            for r in (conn.execute(query)).mappings()
            if contains(r["metadata"] or {}, meta_rest)
            and contains(r["values"] or {}, values_rest)
            and matches(r["metadata"], auth_rest)
        ]
        return rows[offset : offset + limit], len(rows)
    if not exact_total:
        page = conn.execute(query.limit(limit + 1).offset(offset)).mappings().all()
        return [record_of(r) for r in page[:limit]], offset + len(page)
    total = (
        conn.execute(select(func.count()).select_from(threads).where(and_(*conds)))
    ).scalar_one()
    rows = (conn.execute(query.limit(limit).offset(offset))).mappings().all()
    return [record_of(r) for r in rows], int(total)


def count(
    conn: Connection,
    *,
    metadata: Mapping[str, object] | None = None,
    values: Mapping[str, object] | None = None,
    status: str | None = None,
    scope: OwnerScope = ANY_OWNER,
) -> int:
    _, total = search_rows(
        conn, metadata=metadata, values=values, status=status, limit=0, scope=scope
    )
    return total


def expired(conn: Connection, *, limit: int = 100) -> list[tuple[str, str]]:
    """``(thread_id, strategy)`` of threads whose TTL has passed."""
    rows = (
        conn.execute(
            select(threads.c.thread_id, threads.c.ttl)
            .where(threads.c.expires_at.is_not(None), threads.c.expires_at <= now())
            .order_by(threads.c.expires_at)
            .limit(limit)
        )
    ).all()
    return [(r[0], _ttl_strategy(r[1])) for r in rows]


def _ttl_strategy(ttl: object) -> str:
    strategy = (json_object(ttl) or {}).get("strategy")
    return str(strategy) if strategy else "delete"


def renew_ttl(conn: Connection, thread_id: str) -> None:
    """Push expires_at one TTL further (after a keep_latest sweep)."""
    record = get_row(conn, thread_id)
    if record is None:
        return
    ttl, expires_at = ttl_fields(record.ttl)
    conn.execute(
        update(threads)
        .where(threads.c.thread_id == thread_id)
        .values(ttl=ttl, expires_at=expires_at)
    )
