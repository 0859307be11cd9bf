"""Idempotency keys: which creating request of a user a key stands for, and its result.

Every function is a synchronous unit of work for `Database.write`, the same statements on
SQLite and PostgreSQL. The primary key (owner, key) is what makes two requests with one
key — on one replica or on two — agree on a single winner: the loser's insert does nothing
(PostgreSQL waits for the winner's transaction first) and it reads the winner's row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import ColumnElement, Insert, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.tables import idempotency_keys as keys

State = Literal["pending", "done"]


@dataclass(frozen=True, slots=True)
class KeyRecord:
    fingerprint: str
    state: State
    result: dict[str, object] | None


def _insert(conn: Connection) -> Insert:
    if conn.dialect.name == "postgresql":
        return postgresql.insert(keys).on_conflict_do_nothing()
    return sqlite.insert(keys).on_conflict_do_nothing()


def _mine(owner_id: str, key: str) -> ColumnElement[bool]:
    return (keys.c.owner_id == owner_id) & (keys.c.key == key)


def claim(
    conn: Connection,
    *,
    owner_id: str,
    key: str,
    fingerprint: str,
    at: datetime,
    ttl_s: float,
    stale_s: float,
) -> KeyRecord | None:
    """None: the key is now this request's (pending). Else the record another request made:
    the caller replays it, waits for it, or refuses a different request. Expired records
    are forgotten first; a record left pending longer than `stale_s` (its request died
    before it finished) is taken over when the request is the same."""
    purge(conn, at)  # an indexed delete, nothing to do most of the time
    values = {
        "owner_id": owner_id,
        "key": key,
        "fingerprint": fingerprint,
        "state": "pending",
        "result": None,
        "updated_at": at,
        "expires_at": at + timedelta(seconds=ttl_s),
    }
    if conn.execute(_insert(conn).values(values)).rowcount == 1:
        return None
    row = conn.execute(select(keys).where(_mine(owner_id, key))).mappings().first()
    if row is None:  # deleted meanwhile (its request failed): the caller tries again
        return KeyRecord(fingerprint=fingerprint, state="pending", result=None)
    if row["state"] == "pending" and row["fingerprint"] == fingerprint:
        taken = conn.execute(
            update(keys)
            .where(
                _mine(owner_id, key)
                & (keys.c.state == "pending")
                & (keys.c.updated_at <= at - timedelta(seconds=stale_s))
            )
            .values(updated_at=at, expires_at=values["expires_at"])
        )
        if taken.rowcount == 1:
            return None
    result = json_object(row["result"])
    return KeyRecord(
        fingerprint=str(row["fingerprint"]),
        state="done" if row["state"] == "done" else "pending",
        result=None if result is None else dict(result),
    )


def finish(
    conn: Connection, *, owner_id: str, key: str, result: Mapping[str, object], at: datetime
) -> None:
    """The request of the key succeeded: later ones with it get `result`."""
    conn.execute(
        update(keys).where(_mine(owner_id, key)).values(state="done", result=result, updated_at=at)
    )


def release(conn: Connection, *, owner_id: str, key: str) -> None:
    """The request of the key failed: nothing was created, the key is free again."""
    conn.execute(delete(keys).where(_mine(owner_id, key) & (keys.c.state == "pending")))


def purge(conn: Connection, at: datetime) -> int:
    """Forget every expired key."""
    return conn.execute(delete(keys).where(keys.c.expires_at <= at)).rowcount
