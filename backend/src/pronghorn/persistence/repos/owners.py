"""What one owner has across tables: the ids of what must be purged through the runtime
(threads, crons, assistants) and the rows that simply go with them (IM bindings and connect
codes, chat mappings, skill switches, idempotency keys). Used when a user is deleted."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from pronghorn.persistence.tables import (
    assistants,
    channel_bindings,
    channel_codes,
    channel_threads,
    crons,
    idempotency_keys,
    skill_states,
    threads,
)


def thread_ids(conn: Connection, owner_id: str) -> list[str]:
    rows = conn.execute(select(threads.c.thread_id).where(threads.c.owner_id == owner_id))
    return [str(r[0]) for r in rows]


def cron_ids(conn: Connection, owner_id: str) -> list[str]:
    rows = conn.execute(select(crons.c.cron_id).where(crons.c.owner_id == owner_id))
    return [str(r[0]) for r in rows]


def assistant_ids(conn: Connection, owner_id: str) -> list[str]:
    rows = conn.execute(select(assistants.c.assistant_id).where(assistants.c.owner_id == owner_id))
    return [str(r[0]) for r in rows]


def forget_links(conn: Connection, owner_id: str) -> int:
    """Delete the owner's IM bindings (a platform account would otherwise go on running as
    them), unused connect codes, chat-to-thread mappings, skill switches and
    remembered idempotency keys."""
    removed = 0
    for table in (
        channel_bindings,
        channel_codes,
        channel_threads,
        skill_states,
        idempotency_keys,
    ):
        result = conn.execute(delete(table).where(table.c.owner_id == owner_id))
        removed += int(result.rowcount or 0)
    return removed
