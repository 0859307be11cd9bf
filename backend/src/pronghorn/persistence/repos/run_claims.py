"""The run queue's transactions (PostgreSQL, scale-out): claim the next run, renew and
recover leases. Units of work for `Database.write`, like run_units.py.

The `runs` table is the queue: a run is *claimable* while it is `pending`, has no `owner`
(no replica executes it), is due (`claimable_at`), is its thread's earliest unfinished run
and no run of its thread is claimed. A claim sets `owner`, increments `fence` (the fencing
token every later write of the claimant is conditioned on) and starts the lease
(`lease_expires_at`, renewed by the claimant's heartbeat). Claims lock the run row and its
thread row with `FOR UPDATE ... SKIP LOCKED`: two replicas never claim one run, nor two
runs of one thread, and none waits for another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Column,
    Interval,
    ScalarSelect,
    Select,
    and_,
    bindparam,
    exists,
    func,
    literal,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.sql.base import ReadOnlyColumnCollection
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import NamedFromClause

from pronghorn.persistence.records.runs import RunRecord, run_record
from pronghorn.persistence.repos import run_units
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos.run_queue_load import claimed_inflight
from pronghorn.persistence.tables import runs, threads

# pg_advisory_xact_lock key serialising claims while a cluster-wide cap is counted.
CAP_LOCK_KEY = 0x70726E67  # "prng"


@dataclass(frozen=True)
class Caps:
    """Cluster-wide caps a claim honours (None: no cap)."""

    total: int | None = None  # runs.cluster_max_concurrency
    per_user: int | None = None  # runs.max_concurrency_per_user


# An alias of `runs` (Any: SQLAlchemy types a table's columns Column[Any], untyped in Python)
RunsAlias = NamedFromClause[ReadOnlyColumnCollection[str, Column[Any]]]


def _user_running(r: RunsAlias) -> ScalarSelect[int]:
    """How many claimed, unfinished runs the run's user has (the fair queue's key)."""
    x = runs.alias("x")
    return (
        select(func.count())
        .select_from(x)
        .where(
            x.c.owner_id == r.c.owner_id,
            x.c.status.in_(runs_repo.INFLIGHT),
            x.c.owner.is_not(None),
        )
        .scalar_subquery()
    )


def claimable(r: RunsAlias, exclude_threads: list[str]) -> list[ColumnElement[bool]]:
    """The conditions under which run `r` (an alias of `runs`) may be claimed now."""
    e = runs.alias("e")
    earlier = exists().where(
        e.c.thread_id == r.c.thread_id,
        e.c.status.in_(runs_repo.INFLIGHT),
        or_(
            e.c.created_at < r.c.created_at,
            and_(e.c.created_at == r.c.created_at, e.c.run_id < r.c.run_id),
        ),
    )
    o = runs.alias("o")
    claimed_sibling = exists().where(
        o.c.thread_id == r.c.thread_id,
        o.c.run_id != r.c.run_id,
        o.c.status.in_(runs_repo.INFLIGHT),
        o.c.owner.is_not(None),
    )
    conds: list[ColumnElement[bool]] = [
        r.c.status == "pending",
        r.c.owner.is_(None),
        or_(r.c.claimable_at.is_(None), r.c.claimable_at <= func.now()),
        ~earlier,
        ~claimed_sibling,
    ]
    if exclude_threads:
        conds.append(r.c.thread_id.not_in(exclude_threads))
    return conds


def _lease_until(lease_s: float) -> ColumnElement[datetime]:
    return func.now() + literal(timedelta(seconds=lease_s))


def _next_claimable(*, per_user: bool) -> Select[str]:
    """The id of the run to claim next, locked (with its thread row): bound parameters
    `b_exclude` (thread ids whose turn is held by the claimant) and, with `per_user`,
    `b_per_user` (the per-user cap)."""
    r = runs.alias("r")
    conds = claimable(r, [])
    conds.append(r.c.thread_id.not_in(bindparam("b_exclude", expanding=True)))
    # ... nor threads a state update holds, on any replica (threads.take_turn)
    conds.append(or_(threads.c.turn_until.is_(None), threads.c.turn_until <= func.now()))
    if per_user:
        conds.append(_user_running(r) < bindparam("b_per_user"))
    return (
        select(r.c.run_id)
        .select_from(r.join(threads, threads.c.thread_id == r.c.thread_id))
        .where(*conds)
        .order_by(_user_running(r), r.c.created_at, r.c.run_id)
        .limit(1)
        .with_for_update(skip_locked=True, of=[r, threads])
    )


# The queue's hot statements, built once (a claim runs after every accepted or settled run
# somewhere in the cluster): building this select and its cache key anew took ~3 ms of CPU
# per claim; a prebuilt one is compiled once and only bound afterwards.
_NEXT = _next_claimable(per_user=False)
_NEXT_PER_USER = _next_claimable(per_user=True)
_TAKE = (
    update(runs)
    .where(runs.c.run_id == bindparam("b_run_id"))
    .values(
        owner=bindparam("b_owner"),
        fence=runs.c.fence + 1,
        lease_expires_at=func.now() + bindparam("b_lease", type_=Interval()),
        updated_at=func.now(),
    )
    .returning(*runs.c)
)


def _take(conn: Connection, run_id: str, owner: str, lease_s: float) -> RunRecord:
    params = {"b_run_id": run_id, "b_owner": owner, "b_lease": timedelta(seconds=lease_s)}
    row = conn.execute(_TAKE, params).mappings().one()
    return run_record(row)  # with what executing it needs: its owner, fence, attempt


def claim_next(
    conn: Connection,
    *,
    owner: str,
    lease_s: float,
    caps: Caps = Caps(),
    exclude_threads: list[str] | None = None,
) -> RunRecord | None:
    """Claim the oldest claimable run (users with fewer claimed runs first: the fair queue)
    for `owner`; None when there is none (or a cluster-wide cap is reached)."""
    if caps.total is not None or caps.per_user is not None:
        # Counting and claiming must not interleave with another replica's: one at a time.
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": CAP_LOCK_KEY})
        if caps.total is not None:
            busy = conn.execute(
                select(func.count()).select_from(runs).where(claimed_inflight())
            ).scalar_one()
            if busy >= caps.total:
                return None
    params: dict[str, object] = {"b_exclude": list(exclude_threads or [])}
    if caps.per_user is not None:
        params["b_per_user"] = caps.per_user
    stmt = _NEXT_PER_USER if caps.per_user is not None else _NEXT
    run_id = conn.execute(stmt, params).scalar_one_or_none()
    if run_id is None:
        return None
    return _take(conn, run_id, owner, lease_s)


def claim_unclaimed(
    conn: Connection, run_id: str, *, owner: str, lease_s: float
) -> RunRecord | None:
    """Claim one queued run whatever its turn (to settle it without executing it: a cancel
    of a run nobody executes yet); None when it is claimed, locked or finished."""
    found = conn.execute(
        select(runs.c.run_id)
        .where(runs.c.run_id == run_id, runs.c.status == "pending", runs.c.owner.is_(None))
        .with_for_update(skip_locked=True)
    ).scalar_one_or_none()
    if found is None:
        return None
    return _take(conn, run_id, owner, lease_s)


def release(conn: Connection, run_id: str, *, owner: str, fence: int) -> bool:
    """Give an unstarted claimed run back to the queue (graceful shutdown)."""
    return (
        conn.execute(
            update(runs)
            .where(
                runs.c.run_id == run_id,
                runs.c.owner == owner,
                runs.c.fence == fence,
                runs.c.status == "pending",
            )
            .values(owner=None, lease_expires_at=None, updated_at=func.now())
        ).rowcount
        == 1
    )


def renew(conn: Connection, *, owner: str, lease_s: float, held: dict[str, int]) -> set[str]:
    """Extend the leases `owner` still holds among `held` (run id → fence); the ids
    renewed (a missing one was recovered by another replica: the owner lost it)."""
    if not held:
        return set()
    rows = conn.execute(
        update(runs)
        .where(
            runs.c.run_id.in_(list(held)),
            runs.c.owner == owner,
            runs.c.status.in_(runs_repo.INFLIGHT),
        )
        .values(lease_expires_at=_lease_until(lease_s))
        .returning(runs.c.run_id, runs.c.fence)
    ).all()
    return {run_id for run_id, fence in rows if held.get(run_id) == fence}


@dataclass(frozen=True)
class Recovered:
    run_id: str
    thread_id: str
    requeued: bool  # resume: back in the queue; else settled `error`
    error: dict[str, object] | None


def _lock_oldest(
    conn: Connection, limit: int, *where: ColumnElement[bool]
) -> list[tuple[str, str]]:
    """(run id, thread id) of up to `limit` runs matching `where`, oldest first, each row
    locked for this transaction; rows another sweeper holds are skipped, not waited for."""
    rows = conn.execute(
        select(runs.c.run_id, runs.c.thread_id)
        .where(*where)
        .order_by(runs.c.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    return [(str(run_id), str(thread_id)) for run_id, thread_id in rows]


def recover_expired(
    conn: Connection,
    *,
    mode: str,
    error: Mapping[str, object],
    limit: int = 50,
    sweeper: str | None = None,
) -> list[Recovered]:
    """Runs whose lease expired (their replica died or froze): `resume` puts them back in
    the queue (next attempt, from the last checkpoint); `error` settles them. Either way
    the fence moves on, so the old claimant's later writes are refused. A `sweeper` never
    recovers its own leases: it is alive, its heartbeat renews them (only late)."""
    rows = _lock_oldest(
        conn,
        limit,
        runs.c.status.in_(runs_repo.INFLIGHT),
        runs.c.owner.is_not(None),
        runs.c.lease_expires_at < func.now(),
        *([runs.c.owner != sweeper] if sweeper is not None else []),
    )
    out: list[Recovered] = []
    for run_id, thread_id in rows:
        fenced = update(runs).where(runs.c.run_id == run_id)
        if mode == "resume":
            conn.execute(
                fenced.values(
                    status="pending",
                    owner=None,
                    fence=runs.c.fence + 1,
                    lease_expires_at=None,
                    claimable_at=None,
                    attempt=runs.c.attempt + 1,
                    updated_at=func.now(),
                )
            )
            out.append(Recovered(run_id, thread_id, True, None))
            continue
        conn.execute(fenced.values(owner=None, fence=runs.c.fence + 1, lease_expires_at=None))
        run_units.settle_orphan(
            conn, run_id, thread_id, status="error", error=error, cancel_reason=None
        )
        out.append(Recovered(run_id, thread_id, False, dict(error)))
    return out


def expire_queued(
    conn: Connection, *, max_wait_s: float, error: Mapping[str, object], limit: int = 50
) -> list[Recovered]:
    """Queued runs nobody claimed within `max_wait_s` of joining the queue (accepted, due
    after their `after_seconds`, or handed back to it): settled `error` without starting.
    Each row is locked (skip locked) and still unowned and `pending`, so a run is expired
    by exactly one sweeper and never once a replica claimed it."""
    waiting_since = func.greatest(runs.c.claimable_at, runs.c.updated_at)
    rows = _lock_oldest(
        conn,
        limit,
        runs.c.status == "pending",
        runs.c.owner.is_(None),
        waiting_since < func.now() - literal(timedelta(seconds=max_wait_s)),
    )
    out: list[Recovered] = []
    for run_id, thread_id in rows:
        conn.execute(update(runs).where(runs.c.run_id == run_id).values(fence=runs.c.fence + 1))
        run_units.settle_orphan(
            conn, run_id, thread_id, status="error", error=error, cancel_reason=None
        )
        out.append(Recovered(run_id, thread_id, False, dict(error)))
    return out
