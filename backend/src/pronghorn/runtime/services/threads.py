"""Threads as a service: create, find, change, copy, prune and delete them for a principal
(the threads router parses requests and maps these results and errors to HTTP).

Another user's thread, and one the authorizer filters out, is *not found*. State and history,
which need the thread's graph, are in `thread_state`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from pronghorn.auth.authorizer import Action
from pronghorn.persistence.errors import ThreadExists, ThreadMissing
from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.records.threads import ThreadRecord
from pronghorn.persistence.repos import threads as repo
from pronghorn.persistence.repos.common import OwnerScope, new_id
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import NotFound, Unprocessable, refusals_mapped
from pronghorn.runtime.owned import authorize, load_thread, visible
from pronghorn.runtime.services.thread_json import thread_json
from pronghorn.runtime.services.thread_state import apply_supersteps
from pronghorn.runtime.services.thread_sweeper import purge_thread

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


UNSET: Final = repo.UNSET
"""`update(ttl=UNSET)`: leave the TTL as it is."""


@dataclass(frozen=True)
class NewThread:
    """What `POST /threads` asks for (`ttl` as `{ttl: minutes, strategy}`)."""

    thread_id: str | None = None
    metadata: dict[str, object] = field(default_factory=dict[str, object])
    graph_id: str | None = None
    if_exists: str = "raise"
    ttl: Mapping[str, object] | None = None
    supersteps: list[dict[str, object]] | None = None


@dataclass(frozen=True)
class ThreadQuery:
    """A thread search (`limit` 0 with `count` only)."""

    metadata: dict[str, object] | None = None
    values: dict[str, object] | None = None
    status: str | None = None
    ids: list[str] | None = None
    limit: int = 10
    offset: int = 0
    sort_by: str | None = None
    sort_order: str | None = None


async def load_row(
    runtime: AppRuntime,
    access: Access,
    thread_id: str,
    action: Action = "read",
    value: dict[str, object] | None = None,
) -> ThreadRecord:
    """The thread if `access` may `action` it (`NotFound` otherwise)."""
    return await load_thread(runtime, access, thread_id, action, value)


async def get(
    runtime: AppRuntime, access: Access, thread_id: str, *, ttl: bool
) -> dict[str, object]:
    return thread_json(await load_row(runtime, access, thread_id), include_ttl=ttl)


AlsoUnit = Callable[[Connection, ThreadRecord], None]
"""More work in a new thread's transaction (e.g. mapping an IM chat to it)."""


async def _create_row(
    runtime: AppRuntime,
    access: Access,
    new: NewThread,
    *,
    others_missing: bool = False,
    also: AlsoUnit | None = None,
) -> tuple[ThreadRecord, bool]:
    """The one way a thread is created, whoever asks: authorized as `threads.create` (the
    authorizer may stamp its metadata, or refuse), owned by `access`'s principal, the
    graph id in its metadata; `also` runs in the same transaction once it is inserted.
    `(the caller's existing thread, False)` when `if_exists="do_nothing"` finds it;
    another user's existing thread is a `Conflict`, or `NotFound` with `others_missing`
    (the unit refuses with `ThreadExists` / `ThreadMissing`, mapped once by `refusals_mapped`).
    `(the new thread, True)` otherwise."""
    thread_id = new.thread_id or new_id()
    metadata = dict(new.metadata)
    if new.graph_id:
        metadata["graph_id"] = new.graph_id
    value: dict[str, object] = {
        "thread_id": thread_id,
        "metadata": metadata,
        "if_exists": new.if_exists,
        "ttl": new.ttl,
    }
    filt = await authorize(runtime, access, "threads", "create", value)
    stamped = json_object(value.get("metadata"))
    if stamped is not None:  # the authorizer may stamp metadata
        metadata = dict(stamped)
    if new.supersteps and str(metadata.get("graph_id") or "") not in runtime.graphs:
        raise Unprocessable("supersteps need a known graph_id (in the body or metadata)")
    ttl, expires_at = repo.ttl_fields(new.ttl)
    for attempt in (1, 2):  # with do_nothing, a concurrent create of the same id may win
        try:

            def unit(conn: Connection) -> tuple[ThreadRecord, bool]:
                existing = repo.get_row(conn, thread_id)
                if existing is not None:
                    mine = visible(access, existing.owner_id, existing.metadata, filt)
                    if not mine and others_missing:
                        raise ThreadMissing(thread_id)
                    if new.if_exists == "do_nothing" and mine:
                        return existing, False
                    raise ThreadExists(thread_id)
                created = repo.insert_thread(
                    conn,
                    thread_id,
                    metadata=metadata,
                    ttl=ttl,
                    expires_at=expires_at,
                    owner_id=access.identity,
                )
                if also is not None:
                    also(conn, created)
                return created, True

            with refusals_mapped():  # another user's, or a clash: not found, or a conflict
                return await runtime.db.write(unit)
        except IntegrityError:
            if attempt == 2 or new.if_exists != "do_nothing":
                raise
    raise AssertionError("unreachable")


async def ensure(
    runtime: AppRuntime, access: Access, thread_id: str, graph_id: str
) -> ThreadRecord:
    """The caller's thread `thread_id`, created as `POST /threads` with this `graph_id`
    and `if_exists: do_nothing` would when there is none; `NotFound` when it is another
    user's (the agent protocols' threads)."""
    new = NewThread(thread_id=thread_id, graph_id=graph_id, if_exists="do_nothing")
    thread, _ = await _create_row(runtime, access, new, others_missing=True)
    return thread


async def create_with(
    runtime: AppRuntime, access: Access, new: NewThread, also: AlsoUnit
) -> ThreadRecord:
    """A new thread as `create` makes it (no supersteps), `also` run in the transaction
    that inserts it: refused as a whole when the authorizer refuses (`Forbidden`)."""
    thread, _ = await _create_row(runtime, access, new, also=also)
    return thread


async def create(runtime: AppRuntime, access: Access, new: NewThread) -> dict[str, object]:
    """A new thread of `access`'s principal; with `if_exists="do_nothing"` their existing one.
    Supersteps are applied before it is answered: a bad one leaves no thread behind."""
    thread, created = await _create_row(runtime, access, new)
    if not created or not new.supersteps:
        return thread_json(thread)
    try:
        await apply_supersteps(runtime, access, thread.thread_id, new.supersteps)
    except BaseException:
        await purge_thread(runtime, thread.thread_id)  # no partial thread on a bad superstep
        raise
    return await _answer(runtime, thread.thread_id)


async def _answer(runtime: AppRuntime, thread_id: str) -> dict[str, object]:
    """The Thread JSON of a thread just written (`NotFound` if deleted meanwhile)."""
    done = await runtime.db.read(lambda conn: repo.get_row(conn, thread_id))
    if done is None:
        raise NotFound.of("Thread", thread_id)
    return thread_json(done)


async def _scope(runtime: AppRuntime, access: Access, value: dict[str, object]) -> OwnerScope:
    """The caller's own threads (every user's for an admin who asked), within the
    authorizer's metadata filter."""
    filt = await authorize(runtime, access, "threads", "search", value)
    return OwnerScope(owner_id=access.owner_scope, filter=filt)


async def search(
    runtime: AppRuntime, access: Access, query: ThreadQuery, value: dict[str, object]
) -> tuple[list[dict[str, object]], int]:
    """One page of the caller's threads and how many match, exactly on the last page and
    at least `offset + limit + 1` on the others (`value`: the request as the authorizer
    sees it)."""
    scope = await _scope(runtime, access, value)
    found, total = await runtime.db.read(
        lambda conn: repo.search_rows(
            conn,
            metadata=query.metadata,
            values=query.values,
            status=query.status,
            ids=query.ids,
            limit=query.limit,
            offset=query.offset,
            sort_by=query.sort_by,
            sort_order=query.sort_order,
            scope=scope,
            exact_total=False,
        )
    )
    return [thread_json(thread) for thread in found], total


async def count(
    runtime: AppRuntime, access: Access, query: ThreadQuery, value: dict[str, object]
) -> int:
    scope = await _scope(runtime, access, value)
    return await runtime.db.read(
        lambda conn: repo.count(
            conn, metadata=query.metadata, values=query.values, status=query.status, scope=scope
        )
    )


async def update(
    runtime: AppRuntime,
    access: Access,
    thread_id: str,
    *,
    metadata: Mapping[str, object] | None,
    ttl: Mapping[str, object] | repo.Unset | None = UNSET,
) -> dict[str, object]:
    """Merge `metadata` into the thread's; set the TTL (None clears it) unless `UNSET`."""
    value: dict[str, object] = {"thread_id": thread_id, "metadata": dict(metadata or {})}
    await load_row(runtime, access, thread_id, "update", value)
    changed = json_object(value.get("metadata"))
    if changed is not None:  # the authorizer may change it
        metadata = dict(changed)
    with refusals_mapped():  # deleted meanwhile: not found
        updated = await runtime.db.write(
            lambda conn: repo.update_thread(conn, thread_id, metadata=metadata, ttl=ttl)
        )
    return thread_json(updated)


async def delete(runtime: AppRuntime, access: Access, thread_id: str) -> None:
    thread = await load_row(runtime, access, thread_id, "delete")
    await purge_thread(runtime, thread.thread_id)


async def prune(runtime: AppRuntime, access: Access, thread_ids: list[str], strategy: str) -> int:
    """Delete the threads (or keep only their latest checkpoint); unknown and other users'
    threads are skipped alike. How many were pruned. `keep_latest` on a thread whose graph
    uses a `DeltaChannel` is refused (Unprocessable), the threads before it being pruned."""
    pruned = 0
    for thread_id in thread_ids:
        try:
            await load_thread(runtime, access, thread_id, "delete")
        except NotFound:
            continue
        if strategy == "keep_latest":
            try:
                await runtime.checkpointer.aprune([thread_id], strategy="keep_latest")
            except NotImplementedError as exc:
                raise Unprocessable(str(exc)) from exc
        else:
            await purge_thread(runtime, thread_id)
        pruned += 1
    return pruned


async def copy(runtime: AppRuntime, access: Access, thread_id: str) -> dict[str, object]:
    """A new thread of the caller's with the source's metadata and every checkpoint."""
    source = await load_row(runtime, access, thread_id)
    new_thread = new_id()
    # The checkpoints first (one transaction), then the new thread's row: no thread ever
    # points at a partial copy. A copy whose row could not be written is deleted again.
    await runtime.checkpointer.acopy_thread(source.thread_id, new_thread)
    try:
        await runtime.db.retry(
            lambda: runtime.db.write(
                lambda conn: repo.insert_copy(conn, source, new_thread, access.identity)
            )
        )
    except BaseException:
        await asyncio.shield(runtime.checkpointer.adelete_thread(new_thread))
        raise
    return await _answer(runtime, new_thread)
