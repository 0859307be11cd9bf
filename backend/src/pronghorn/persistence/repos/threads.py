"""Threads: rows, status transitions, cached state values."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from pronghorn.persistence.repos.common import iso, now
from pronghorn.persistence.tables import threads

UNSET: Any = object()


def to_api(row: Any) -> dict[str, Any]:
    out = {
        "thread_id": row["thread_id"],
        "created_at": iso(row["created_at"]),
        "updated_at": iso(row["updated_at"]),
        "state_updated_at": iso(row["state_updated_at"]),
        "metadata": row["metadata"] or {},
        "status": row["status"],
        "config": row["config"] or {},
        "values": row["values"] if row["values"] is not None else {},
        "interrupts": row["interrupts"] or {},
        "error": row["error"],
    }
    if row["ttl"] is not None:
        out["ttl"] = row["ttl"]
    return out


async def get_row(conn: AsyncConnection, thread_id: str) -> Any | None:
    return (
        (await conn.execute(select(threads).where(threads.c.thread_id == thread_id)))
        .mappings()
        .first()
    )


async def get(conn: AsyncConnection, thread_id: str) -> dict[str, Any] | None:
    row = await get_row(conn, thread_id)
    return to_api(row) if row else None


async def insert_thread(
    conn: AsyncConnection,
    thread_id: str,
    *,
    metadata: dict[str, Any] | None = None,
    status: str = "idle",
    ttl: dict[str, Any] | None = None,
    expires_at: datetime | None = None,
) -> dict[str, Any]:
    ts = now()
    values = {
        "thread_id": thread_id,
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
    await conn.execute(insert(threads).values(**values))
    return to_api(values)


async def set_fields(
    conn: AsyncConnection,
    thread_id: str,
    *,
    status: str = UNSET,
    values: Any = UNSET,
    interrupts: Any = UNSET,
    error: Any = UNSET,
    metadata: Any = UNSET,
) -> None:
    """Update the given fields (state fields also bump state_updated_at)."""
    ts = now()
    changes: dict[str, Any] = {"updated_at": ts}
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
    await conn.execute(update(threads).where(threads.c.thread_id == thread_id).values(**changes))
