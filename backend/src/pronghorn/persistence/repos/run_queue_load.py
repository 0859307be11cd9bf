"""The cluster's queue caps (runs.max_queued, runs.max_queued_per_user): how full the
database queue is, and whether one more waiting run would pass a cap. Counted in the
accept transaction (run_units.accept_run) and before a batch (the cluster run queue)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, func, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from pronghorn.persistence.errors import QueueFull
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.tables import runs

# pg_advisory_xact_lock key serialising the accepts while the queue caps are counted.
QUEUE_LOCK_KEY = 0x70726E71  # "prnq"


@dataclass(frozen=True, slots=True)
class QueueCaps:
    """The queue caps (None: no cap)."""

    max_queued: int | None = None
    max_queued_per_user: int | None = None


@dataclass(frozen=True)
class QueueLoad:
    queued: int  # unclaimed unfinished runs, all users
    user_queued: int  # of those, the user's
    user_running: int  # the user's claimed unfinished runs


def queue_full(caps: QueueCaps, load: QueueLoad) -> QueueFull | None:
    """The cap one more waiting run would pass under `load` (the global one first), or
    None when it fits."""
    counts = {
        "queued": load.queued,
        "user_queued": load.user_queued,
        "user_running": load.user_running,
    }
    if caps.max_queued is not None and load.queued >= caps.max_queued:
        return QueueFull("max_queued", caps.max_queued, **counts)
    if caps.max_queued_per_user is not None and load.user_queued >= caps.max_queued_per_user:
        return QueueFull("max_queued_per_user", caps.max_queued_per_user, **counts)
    return None


def claimed_inflight() -> ColumnElement[bool]:
    """An unfinished run some replica has claimed."""
    return and_(runs.c.status.in_(runs_repo.INFLIGHT), runs.c.owner.is_not(None))


def queue_load(conn: Connection, owner_id: str | None, *, lock: bool) -> QueueLoad:
    """How full the cluster's queue is, for `owner_id`'s runs and in all. `lock`: first
    take the advisory lock that serialises the accepts counting it (until the transaction
    ends), so two replicas never both admit a run past a cap."""
    if lock:
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": QUEUE_LOCK_KEY})
    waiting = and_(runs.c.status == "pending", runs.c.owner.is_(None))
    mine = runs.c.owner_id == owner_id
    row = conn.execute(
        select(
            func.count().filter(waiting),
            func.count().filter(and_(waiting, mine)),
            func.count().filter(and_(claimed_inflight(), mine)),
        ).where(runs.c.status.in_(runs_repo.INFLIGHT))
    ).one()
    return QueueLoad(int(row[0]), int(row[1]), int(row[2]))
