"""The run engine's transactions as synchronous units of work for `Database.write`.

A run costs two small transactions of its own (accept, settle); its `running` write and
its events ride in the event writer's batches, the last batch in the settle's transaction
(runtime/events/event_writer.py). Written as plain SQLAlchemy
Core over a sync Connection, each runs in one hop on SQLite (see `Database.write`) and through
`run_sync` on PostgreSQL — the same statements on both.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import NotRequired, TypedDict, Unpack

from sqlalchemy import bindparam, case, delete, exists, func, insert, or_, select, true, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import CTE, ColumnElement, Select

from pronghorn.ids import system_assistant_id
from pronghorn.persistence.errors import AssistantMissing, ThreadBusy, ThreadMissing
from pronghorn.persistence.metadata_filter import matches
from pronghorn.persistence.records.assistants import AssistantRecord, assistant_record
from pronghorn.persistence.records.columns import text_or_none, timestamp_or_none
from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.persistence.records.runs import RunRecord, run_record
from pronghorn.persistence.repos import assistants as assistants_repo
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.repos.common import OwnerScope, now
from pronghorn.persistence.repos.run_queue_load import QueueCaps, queue_full, queue_load
from pronghorn.persistence.tables import assistants, runs, threads


def _unfinished(status_column: ColumnElement[str]) -> ColumnElement[bool]:
    """`status IN ('pending', 'running')` as ORs: an IN list of literals is rendered again
    on every execution (SQLAlchemy's "post-compile" parameters), an OR is compiled once."""
    return or_(*(status_column == status for status in runs_repo.INFLIGHT))


# The accept transaction's statements, built once with bound parameters (see _START below).
_ASSISTANT = select(assistants).where(assistants.c.assistant_id == bindparam("b_id"))
# The thread marked busy and read back in one statement, which also locks its row
# (PostgreSQL) until the accept commits: nothing was changed but `status`/`updated_at`, so
# the row as returned is the thread as it was, but for those. A refused run rolls it back.
_THREAD_BUSY = (
    update(threads)
    .where(threads.c.thread_id == bindparam("b_id"))
    .values(status="busy", updated_at=bindparam("b_ts"))
    .returning(threads.c.owner_id, threads.c.metadata, threads.c.turn_until)
)
_THREAD_META = (
    update(threads)
    .where(threads.c.thread_id == bindparam("b_id"))
    .values(metadata=bindparam("b_metadata", type_=threads.c["metadata"].type))
)
# PostgreSQL: the assistant's candidate rows read and the thread marked busy (its row
# locked) in one statement, the thread's columns beside each assistant row (`t_*`;
# `t_thread_id` is NULL when there is no such thread). The UPDATE runs once whatever the
# SELECT returns; when no assistant is found the accept raises and rolls it back.
_BUSY_CTE = _THREAD_BUSY.returning(threads.c.thread_id).cte("busy_thread")
_ASSISTANT_AND_THREAD = (
    select(
        assistants,
        _BUSY_CTE.c.thread_id.label("t_thread_id"),
        _BUSY_CTE.c.owner_id.label("t_owner_id"),
        _BUSY_CTE.c.metadata.label("t_metadata"),
        _BUSY_CTE.c.turn_until.label("t_turn_until"),
    )
    .select_from(assistants.outerjoin(_BUSY_CTE, true()))
    # Two candidates at most (`_candidates`; the second repeats the first when there is
    # one): no IN list, which SQLAlchemy would render again on every execution.
    .where(
        or_(
            assistants.c.assistant_id == bindparam("b_id1"),
            assistants.c.assistant_id == bindparam("b_id2"),
        )
    )
)


def _candidates(id_or_graph_id: str) -> list[str]:
    """The assistant ids `id_or_graph_id` may name, in the order they are tried: itself
    (when a UUID), then its graph's system assistant."""
    candidates: list[str] = []
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        candidates.append(str(uuid.UUID(id_or_graph_id)))
    candidates.append(system_assistant_id(id_or_graph_id))
    return candidates


def resolve_assistant(
    conn: Connection, id_or_graph_id: str, owner_scope: str | None = None
) -> AssistantRecord:
    """The assistant with this id, or — for a graph id — that graph's system assistant;
    with `owner_scope`, only a system assistant or one of that owner; else
    `AssistantMissing`."""
    for candidate in _candidates(id_or_graph_id):
        row = conn.execute(_ASSISTANT, {"b_id": candidate}).mappings().first()
        if row is not None and assistants_repo.usable(row, owner_scope):
            return assistant_record(row)
    raise AssistantMissing(id_or_graph_id)


@dataclass(frozen=True, slots=True)
class Accepted:
    run: RunRecord
    inflight: list[RunRecord]
    thread_metadata: dict[str, object]
    owner_id: str | None  # the thread's owner: the run belongs to it
    claimed: bool = False  # claimed by the accepting replica in the same transaction


class Fenced(Exception):
    """A write of a replica that no longer holds the run's claim (its lease expired and
    another replica took the run over): refused, the transaction rolls back."""


@dataclass(frozen=True, slots=True)
class RunOwnership:
    """Who a run is accepted for: `owner_id` owns a thread the run creates; an existing
    thread must be within `thread_scope` (its owner and the authorizer's metadata filter)
    or it is *missing*; `principal` (JSON) is who the run executes as."""

    owner_id: str
    principal: dict[str, object]
    thread_scope: OwnerScope


class RunFields(TypedDict):
    """The columns of a run `accept_run` inserts that its caller gives (`new_run_row`)."""

    run_id: str
    kwargs: Mapping[str, object]
    metadata: Mapping[str, object]
    multitask_strategy: str
    temporary: bool
    owner: str | None
    claimable_at: datetime | None


class _Thread(TypedDict):
    """The thread an accept marked busy, as it was: who owns it, its metadata, until when
    a state update holds it."""

    owner_id: object
    metadata: JsonObject | None
    turn_until: object


class AcceptArgs(TypedDict):
    """What `accept_run` and `accept_resolved` take besides the assistant (see
    `accept_run`)."""

    thread_id: str
    create_thread: bool
    reject_if_busy: bool
    run_fields: RunFields
    ownership: RunOwnership
    inflight_known: NotRequired[list[RunRecord] | None]
    new_thread_metadata: NotRequired[Mapping[str, object] | None]
    claim_if_idle: NotRequired[Mapping[str, object] | None]
    queue_caps: NotRequired[QueueCaps | None]


def accept_run(
    conn: Connection, *, assistant: AssistantRecord, **terms: Unpack[AcceptArgs]
) -> Accepted:
    """Check the thread and the multitask strategy, insert the run of `assistant` (as
    `resolve_assistant` found it, in the same transaction) as pending and mark the thread
    busy — all or nothing: a refusal raises a typed error (persistence/errors.py:
    `ThreadMissing`, `ThreadBusy`, `QueueFull`) and rolls it all back. A thread it creates
    gets `new_thread_metadata` (as its creation was authorized) and the graph's ids.

    `inflight_known`: the thread's unfinished runs when the caller knows them (SQLite: the
    process's memory is authoritative); None: read them under the thread's row lock.
    `claim_if_idle` (scale-out): the claim columns (owner, fence, lease) the run gets when
    its thread has no unfinished run, so the accepting replica executes it at once; otherwise
    the run is queued unclaimed (no owner) for any replica to claim, within `queue_caps`
    (scale-out: counted in the database under an advisory lock)."""
    row = conn.execute(_THREAD_BUSY, {"b_id": terms["thread_id"], "b_ts": now()}).mappings().first()
    thread: _Thread | None = None
    if row is not None:
        thread = {
            "owner_id": row["owner_id"],
            "metadata": json_object(row["metadata"]),
            "turn_until": row["turn_until"],
        }
    return _accept_locked(conn, assistant, thread, terms)


@dataclass(frozen=True, slots=True)
class Resolved:
    """An accept's assistant, as `resolve_for_accept` found it, and — on PostgreSQL — its
    thread already marked busy (`locked`; `thread`: the row as it was, None when there is
    no such thread)."""

    assistant: AssistantRecord
    thread_id: str
    locked: bool = False
    thread: _Thread | None = None


def resolve_for_accept(
    conn: Connection, assistant_id: str, owner_scope: str | None, thread_id: str
) -> Resolved:
    """`resolve_assistant` for an accept of a run on `thread_id` (`AssistantMissing`
    otherwise); the caller checks the assistant, then `accept_resolved` accepts the run —
    the same refusals in the same order as `resolve_assistant` then `accept_run`, in one
    transaction. On PostgreSQL the assistant's read and the thread's busy mark (its lock)
    are one statement, and `accept_resolved` reads the thread's unfinished runs in the
    run's INSERT: two statements, not four."""
    if conn.dialect.name != "postgresql":
        return Resolved(resolve_assistant(conn, assistant_id, owner_scope), thread_id)
    candidates = _candidates(assistant_id)
    params = {
        "b_id1": candidates[0],
        "b_id2": candidates[-1],
        "b_id": thread_id,
        "b_ts": now(),
    }
    found = {
        str(r["assistant_id"]): r for r in conn.execute(_ASSISTANT_AND_THREAD, params).mappings()
    }
    for candidate in candidates:
        row = found.get(candidate)
        if row is not None and assistants_repo.usable(row, owner_scope):
            break
    else:
        raise AssistantMissing(assistant_id)
    thread: _Thread | None = None
    if row["t_thread_id"] is not None:
        thread = {
            "owner_id": row["t_owner_id"],
            "metadata": json_object(row["t_metadata"]),
            "turn_until": row["t_turn_until"],
        }
    return Resolved(assistant_record(row), thread_id, locked=True, thread=thread)


def accept_resolved(conn: Connection, resolved: Resolved, **terms: Unpack[AcceptArgs]) -> Accepted:
    """`accept_run` for the assistant (and thread) `resolve_for_accept` found."""
    if terms["thread_id"] != resolved.thread_id:
        raise ValueError("the run's thread is not the one resolved for it")
    if not resolved.locked:
        return accept_run(conn, assistant=resolved.assistant, **terms)
    return _accept_locked(conn, resolved.assistant, resolved.thread, terms)


def _accept_locked(
    conn: Connection, assistant: AssistantRecord, row: _Thread | None, terms: AcceptArgs
) -> Accepted:
    """`accept_run` once the thread is marked busy (`row`: as it was; None: no such
    thread)."""
    thread_id = terms["thread_id"]
    inflight_known = terms.get("inflight_known")
    claim_if_idle = terms.get("claim_if_idle")
    queue_caps = terms.get("queue_caps")
    graph_meta = {"graph_id": assistant.graph_id, "assistant_id": assistant.assistant_id}
    ownership = terms["ownership"]
    scope = ownership.thread_scope
    if row is not None and not (
        (scope.owner_id is None or row["owner_id"] == scope.owner_id)
        and matches(row["metadata"], scope.filter)
    ):
        raise ThreadMissing(thread_id)  # another user's: as if there were none
    values: dict[str, object]
    if row is None:
        if not terms["create_thread"]:
            raise ThreadMissing(thread_id)
        meta: dict[str, object] = {**(terms.get("new_thread_metadata") or {}), **graph_meta}
        owner_id: str | None = ownership.owner_id
        # Parameters apart from the statement: the compiled INSERT is cached once.
        conn.execute(
            insert(threads),
            threads_repo.new_thread_row(
                thread_id, metadata=meta, status="busy", owner_id=ownership.owner_id
            ),
        )
        inflight: list[RunRecord] | None = []
        new_meta = None
    else:
        owner_id = text_or_none(row["owner_id"])
        meta = dict(row["metadata"] or {})
        changed = {k: v for k, v in graph_meta.items() if meta.get(k) != v}
        meta.update(changed)
        new_meta = meta if changed else None  # the thread's first run of this graph/assistant
        inflight = inflight_known
        if inflight is None and not (conn.dialect.name == "postgresql" and queue_caps is None):
            inflight = inflight_rows(conn, thread_id)
        if inflight is not None and inflight and terms["reject_if_busy"]:
            raise ThreadBusy(thread_id, inflight)
    values = runs_repo.new_run_row(
        thread_id=thread_id,
        assistant_id=assistant.assistant_id,
        owner_id=owner_id,
        principal=ownership.principal,
        **terms["run_fields"],
    )
    in_turn = _in_turn(row)
    if inflight is None:
        # PostgreSQL: the thread's unfinished runs are read by the INSERT itself (its
        # snapshot is taken under the thread's lock, so it sees every accept committed
        # before), the claim decided in SQL as below.
        inflight = _insert_reading_inflight(conn, values, new_meta, claim_if_idle, in_turn)
        if inflight and terms["reject_if_busy"]:
            raise ThreadBusy(thread_id, inflight)  # the INSERT rolls back with the rest
        claimed = claim_if_idle is not None and not inflight and not in_turn
        if claim_if_idle is not None:
            values.update(claim_if_idle if claimed else {"owner": None})
        return Accepted(run_record(values), inflight, meta, owner_id, claimed)
    claimed = claim_if_idle is not None and not inflight and not in_turn
    if queue_caps is not None and not claimed:
        full = queue_full(queue_caps, queue_load(conn, owner_id, lock=True))
        if full is not None:
            raise full
    if claim_if_idle is not None:
        values.update(claim_if_idle if claimed else {"owner": None})
    if new_meta is not None and conn.dialect.name == "postgresql":
        # The thread's new metadata rides in the run's INSERT (a data-modifying CTE): one
        # statement, not two.
        conn.execute(insert(runs).values(values).add_cte(_meta_cte(thread_id, new_meta)))
    else:
        if new_meta is not None:
            conn.execute(_THREAD_META, {"b_id": thread_id, "b_metadata": new_meta})
        conn.execute(insert(runs), values)
    return Accepted(run_record(values), inflight, meta, owner_id, claimed)


def _meta_cte(thread_id: str, new_meta: Mapping[str, object]) -> CTE:
    return (
        update(threads)
        .where(threads.c.thread_id == thread_id)
        .values(metadata=new_meta)
        .cte("thread_metadata")
    )


# PostgreSQL: the run's INSERT reading its thread's unfinished runs (`_insert_reading_inflight`),
# built once per shape with bound parameters (`v_<column>`; the claim's `c_<column>`).
_INFLIGHT = (
    select(runs)
    .where(runs.c.thread_id == bindparam("b_thread_id"), _unfinished(runs.c.status))
    .cte("inflight")
)
_CLAIM_COLUMNS = frozenset({"owner", "fence", "lease_expires_at"})  # fast_claim's


def _reading_inflight(claim: bool, meta: bool) -> Select[tuple[object, ...]]:
    busy = exists(select(_INFLIGHT.c.run_id))
    row: dict[str, ColumnElement[object]] = {}
    for column in runs.c:
        value: ColumnElement[object] = bindparam(f"v_{column.key}", type_=column.type)
        if claim and column.key in _CLAIM_COLUMNS:
            claimed = bindparam(f"c_{column.key}", type_=column.type)
            value = case((busy, value), else_=claimed)
        row[column.key] = value
    stmt = (
        select(_INFLIGHT)
        .order_by(_INFLIGHT.c.created_at)
        .add_cte(insert(runs).values(row).cte("new_run"))
    )
    if meta:
        meta_cte = (
            update(threads)
            .where(threads.c.thread_id == bindparam("b_thread_id"))
            .values(metadata=bindparam("b_metadata", type_=threads.c["metadata"].type))
            .cte("thread_metadata")
        )
        stmt = stmt.add_cte(meta_cte)
    return stmt


_READING_INFLIGHT = {
    (claim, meta): _reading_inflight(claim, meta)
    for claim in (False, True)
    for meta in (False, True)
}


def _insert_reading_inflight(
    conn: Connection,
    values: Mapping[str, object],
    new_meta: Mapping[str, object] | None,
    claim_if_idle: Mapping[str, object] | None,
    in_turn: bool,
) -> list[RunRecord]:
    """PostgreSQL: insert the run and read its thread's other unfinished runs in one
    statement (the run's INSERT and the thread's new metadata as data-modifying CTEs of the
    SELECT of those runs, which does not see the row it inserts). The run is claimed
    (`claim_if_idle`) only when that SELECT finds none: the claim columns are CASEs on it."""
    unclaimed = dict(values)
    if claim_if_idle is not None:
        unclaimed["owner"] = None
    params: dict[str, object] = {f"v_{k}": v for k, v in unclaimed.items()}
    params["b_thread_id"] = values["thread_id"]
    claim = claim_if_idle is not None and not in_turn
    if claim_if_idle is not None and claim:
        claimed = {**values, **claim_if_idle}
        if set(claim_if_idle) - _CLAIM_COLUMNS:
            raise ValueError(f"not claim columns: {sorted(set(claim_if_idle) - _CLAIM_COLUMNS)}")
        params |= {f"c_{k}": claimed[k] for k in _CLAIM_COLUMNS}
    if new_meta is not None:
        params["b_metadata"] = new_meta
    stmt = _READING_INFLIGHT[claim, new_meta is not None]
    return [run_record(r) for r in conn.execute(stmt, params).mappings()]


def _in_turn(thread: _Thread | None) -> bool:
    """Scale-out: a state update holds the thread (runtime/services/thread_state.py), so a run
    accepted now is queued, claimed once the update is done."""
    until = None if thread is None else timestamp_or_none(thread["turn_until"])
    return until is not None and until > now()


def inflight_rows(conn: Connection, thread_id: str) -> list[RunRecord]:
    rows = conn.execute(
        select(runs)
        .where(runs.c.thread_id == thread_id, runs.c.status.in_(runs_repo.INFLIGHT))
        .order_by(runs.c.created_at)
    ).mappings()
    return [run_record(r) for r in rows]


# Hot statements are built once with bound parameters, so SQLAlchemy compiles each once and
# never has to compute a cache key over the values of every call.
_START = (
    update(runs)
    .where(runs.c.run_id == bindparam("b_run_id"), runs.c.status == "pending")
    .values(status="running", started_at=bindparam("b_ts"), updated_at=bindparam("b_ts"))
)
_FINISH = (
    update(runs)
    .where(runs.c.run_id == bindparam("b_run_id"))
    .values(
        status=bindparam("b_status"),
        error=bindparam("b_error", type_=runs.c.error.type),
        cancel_reason=bindparam("b_cancel_reason"),
        updated_at=bindparam("b_ts"),
        ended_at=bindparam("b_ts"),
        # A run whose `running` write was never made (it ended first: see StartMark)
        started_at=func.coalesce(
            runs.c.started_at, bindparam("b_started", type_=runs.c.started_at.type)
        ),
        input_tokens=bindparam("b_input_tokens"),
        output_tokens=bindparam("b_output_tokens"),
        total_tokens=bindparam("b_total_tokens"),
        llm_calls=bindparam("b_llm_calls"),
    )
)
_SETTLE_THREAD = (
    update(threads)
    .where(threads.c.thread_id == bindparam("b_thread_id"))
    .values(
        status=bindparam("b_status"),
        values=bindparam("b_values", type_=threads.c["values"].type),
        interrupts=bindparam("b_interrupts", type_=threads.c.interrupts.type),
        error=bindparam("b_error", type_=threads.c.error.type),
        updated_at=bindparam("b_ts"),
        state_updated_at=bindparam("b_ts"),
    )
)
USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens", "llm_calls")


_START_FENCED = _START.where(
    runs.c.owner == bindparam("b_owner"), runs.c.fence == bindparam("b_fence")
)


def start_run(
    conn: Connection, run_id: str, at: datetime, fence: tuple[str, int] | None = None
) -> bool:
    """Mark the run `running` since `at` (with `fence`: only while that claim holds)."""
    if fence is None:
        return conn.execute(_START, {"b_run_id": run_id, "b_ts": at}).rowcount == 1
    params = {"b_run_id": run_id, "b_ts": at, "b_owner": fence[0], "b_fence": fence[1]}
    return conn.execute(_START_FENCED, params).rowcount == 1


@dataclass
class StartMark:
    """A run's `running` write, made with the next batch of its events (a unit for
    `EventBroker.write_later`) unless the run's settle comes first: then the settle drops
    it (`drop`) and records `started_at` itself, one UPDATE instead of two."""

    run_id: str
    at: datetime
    fence: tuple[str, int] | None = None
    dropped: bool = False

    def drop(self) -> datetime:
        """No `running` write any more (the settle writes the end): when the run began."""
        self.dropped = True
        return self.at

    def __call__(self, conn: Connection) -> None:
        if not self.dropped:
            start_run(conn, self.run_id, self.at, self.fence)


# The settle's first statement, PostgreSQL: the thread row is locked (as in accept_run) by a
# sub-select the run's UPDATE joins, so the lock is taken before the run row's, in the
# statement that records the run's end; the fence (owner, token) is part of its WHERE, so a
# claim that moved it meanwhile leaves no row to update (`Fenced`).
_LOCKED_THREAD = (
    select(threads.c.thread_id)
    .where(threads.c.thread_id == bindparam("b_thread_id"))
    .with_for_update()
    .subquery("locked_thread")
)
_FENCE = (runs.c.owner == bindparam("b_owner"), runs.c.fence == bindparam("b_fence"))
_FINISH_LOCKED = _FINISH.where(runs.c.thread_id == _LOCKED_THREAD.c.thread_id)
_FINISH_FENCED = _FINISH_LOCKED.where(*_FENCE)
_DELETE = delete(runs).where(runs.c.run_id == bindparam("b_run_id"))
_DELETE_LOCKED = _DELETE.where(runs.c.thread_id == _LOCKED_THREAD.c.thread_id)
_DELETE_FENCED = _DELETE_LOCKED.where(*_FENCE)
# ... and its second: the thread's new state, `busy` while another run of it is unfinished.
# Under the lock the first statement took, this statement's snapshot sees every run an
# accept committed before it (a plain read, as the lock does not change what it reads).
_OTHER = runs.alias("other")
_SETTLE_THREAD_SQL = _SETTLE_THREAD.values(
    status=case(
        (
            exists().where(
                _OTHER.c.thread_id == bindparam("b_thread_id"),
                _OTHER.c.run_id != bindparam("b_run_id"),
                _unfinished(_OTHER.c.status),
            ),
            "busy",
        ),
        else_=bindparam("b_status", type_=threads.c.status.type),
    )
).returning(threads.c.status)


class RunEnd(TypedDict):
    """How a run ended, as `settle_run` records it (`started_at`: when it began, if its
    `running` write was not made)."""

    status: str
    error: NotRequired[Mapping[str, object] | None]
    cancel_reason: NotRequired[str | None]
    usage: NotRequired[Mapping[str, int]]
    started_at: NotRequired[datetime | None]


class ThreadEnd(TypedDict):
    """The thread's state after a run, as `settle_run` records it."""

    values: object  # the state: any JSON (None too)
    interrupts: Mapping[str, object]
    error: Mapping[str, object] | None


def settle_run(
    conn: Connection,
    *,
    run_id: str,
    thread_id: str,
    delete_run: bool,
    run_fields: RunEnd,
    thread_status: str,
    thread_fields: ThreadEnd,
    others_pending: bool | None,
    lock_rows: bool,
    fence: tuple[str, int] | None = None,
) -> bool:
    """Record the run's end and the thread's new state in one transaction (the run's events
    are already stored: see runtime/events/event_writer.py); whether another run of the
    thread is still to finish (the thread stays `busy`). `others_pending` is that answer on
    SQLite, where the process's memory is authoritative (taken by the caller's unit, on the
    database thread); None: the database answers it, in the thread's update. With
    `lock_rows` the thread row is locked first (PostgreSQL). With `fence` (owner, token: a
    claimed run, scale-out) only while that claim still holds; else `Fenced` rolls it all
    back.

    PostgreSQL: two statements (run, then thread); the run's row is neither read first nor
    locked apart from its update."""
    ts = now()
    params: dict[str, object] = {"b_run_id": run_id, "b_thread_id": thread_id, "b_ts": ts}
    if fence is not None:
        if not lock_rows:
            raise ValueError("a fenced settle locks its rows")
        params |= {"b_owner": fence[0], "b_fence": fence[1]}
    if delete_run:
        stmt = _DELETE_FENCED if fence is not None else _DELETE_LOCKED if lock_rows else _DELETE
        done = conn.execute(stmt, params).rowcount
    else:
        usage: Mapping[str, int] = run_fields.get("usage") or {}
        stmt = _FINISH_FENCED if fence is not None else _FINISH_LOCKED if lock_rows else _FINISH
        done = conn.execute(
            stmt,
            {
                **params,
                "b_status": run_fields["status"],
                "b_error": run_fields.get("error"),
                "b_cancel_reason": run_fields.get("cancel_reason"),
                "b_started": run_fields.get("started_at"),
                **{f"b_{k}": int(usage.get(k, 0)) for k in USAGE_KEYS},
            },
        ).rowcount
    if fence is not None and done != 1:
        raise Fenced(run_id)
    thread_params: dict[str, object] = {
        "b_thread_id": thread_id,
        "b_run_id": run_id,
        "b_values": thread_fields["values"],
        "b_interrupts": thread_fields["interrupts"],
        "b_error": thread_fields["error"],
        "b_ts": ts,
    }
    if others_pending is not None:
        thread_params["b_status"] = "busy" if others_pending else thread_status
        conn.execute(_SETTLE_THREAD, thread_params)
        return others_pending
    thread_params["b_status"] = thread_status
    status = conn.execute(_SETTLE_THREAD_SQL, thread_params).scalar_one_or_none()
    return status == "busy"


def get_run(
    conn: Connection, run_id: str, thread_id: str | None, owner_id: str | None = None
) -> RunRecord | None:
    """The run (of that thread, and of that owner, when given)."""
    stmt = select(runs).where(runs.c.run_id == run_id)
    if thread_id is not None:
        stmt = stmt.where(runs.c.thread_id == thread_id)
    if owner_id is not None:
        stmt = stmt.where(runs.c.owner_id == owner_id)
    row = conn.execute(stmt).mappings().first()
    return run_record(row) if row is not None else None


@dataclass(frozen=True, slots=True)
class OwnedRun:
    run: RunRecord
    owner_id: str | None  # the run's owner (its thread's)
    thread_metadata: dict[str, object]


def get_owned_run(conn: Connection, run_id: str, thread_id: str | None) -> OwnedRun | None:
    """The run (of that thread, when given) with its owner and its thread's metadata, in
    one statement (the SDKs GET a run after every stream)."""
    stmt = (
        select(runs, threads.c.metadata.label("thread_metadata"))
        .select_from(runs.outerjoin(threads, threads.c.thread_id == runs.c.thread_id))
        .where(runs.c.run_id == run_id)
    )
    if thread_id is not None:
        stmt = stmt.where(runs.c.thread_id == thread_id)
    row = conn.execute(stmt).mappings().first()
    if row is None:
        return None
    metadata = json_object(row["thread_metadata"]) or {}
    return OwnedRun(run_record(row), text_or_none(row["owner_id"]), dict(metadata))


def settle_orphan(
    conn: Connection,
    run_id: str,
    thread_id: str,
    *,
    status: str,
    error: Mapping[str, object] | None,
    cancel_reason: str | None,
) -> None:
    """Finish a run that no live task owns (left by a dead process) and give its thread the
    status its remaining runs and interrupts imply."""
    conn.execute(
        runs_repo.finish_stmt(run_id, status=status, error=error, cancel_reason=cancel_reason)
    )
    thread = conn.execute(
        select(threads.c.interrupts).where(threads.c.thread_id == thread_id)
    ).first()
    if thread is None:
        return
    if any(r.run_id != run_id for r in inflight_rows(conn, thread_id)):
        new_status = "busy"
    elif status == "error":
        new_status = "error"
    elif thread[0]:
        new_status = "interrupted"
    else:
        new_status = "idle"
    conn.execute(
        threads_repo.set_fields_stmt(
            thread_id, status=new_status, error=error if new_status == "error" else None
        )
    )


def run_status_owner(conn: Connection, run_id: str) -> tuple[str, str | None] | None:
    """(status, owner) of a run — owner: the run manager executing it — or None."""
    row = conn.execute(select(runs.c.status, runs.c.owner).where(runs.c.run_id == run_id)).first()
    return (row[0], row[1]) if row is not None else None
