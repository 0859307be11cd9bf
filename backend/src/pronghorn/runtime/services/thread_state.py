"""A thread's state and history through its graph, and state updates that never interleave
with a run (the threads router calls these).

Graph-bound work (the checkpointer) happens outside the app's database transactions on
SQLite, where both share one lock. A state update claims the thread first:

- in this process, `RunManager.thread_turn`: refused if a run of the thread is in flight
  here; runs created meanwhile wait until the update is done;
- in the database, the thread row: refused if it says busy (a run accepted by any replica).
  On PostgreSQL the check also takes the thread's *turn* (`threads.take_turn`: `turn_until`,
  in one short transaction), so every replica serializes with the update: another state
  update is refused (`ThreadBusy`), a run accepted meanwhile is queued and no replica claims
  it until the turn ends (with the saved cache, in a second short transaction); then the
  replicas are told there is work, and the run starts from the updated state. No row lock
  is held while the checkpointer writes on its own connection, so no transaction idles
  past the server's bounds (`database.idle_in_transaction_timeout_s`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING

from langchain_core.runnables import RunnableConfig
from langgraph.errors import InvalidUpdateError

from pronghorn.graphs.registry import AnyGraph
from pronghorn.graphs.requests import AccessContext, GraphRequest
from pronghorn.persistence.records.json_object import JsonObject
from pronghorn.persistence.repos import threads as repo
from pronghorn.runtime.access import Access, graph_user
from pronghorn.runtime.engine import state as st
from pronghorn.runtime.engine.graph_access import require_graph
from pronghorn.runtime.engine.thread_busy import ThreadBusy
from pronghorn.runtime.errors import InvalidRequest, NotFound, Unprocessable
from pronghorn.runtime.owned import load_thread

log = logging.getLogger("pronghorn.threads")

if TYPE_CHECKING:
    from pronghorn.persistence.records.threads import ThreadRecord
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

CachedState = tuple[JsonObject, Mapping[str, Sequence[JsonObject]]]
"""What the thread row caches of its state: its values and its pending interrupts by task."""
SaveCache = Callable[[CachedState], Awaitable[None]]


@contextlib.asynccontextmanager
async def thread_graph(
    runtime: AppRuntime,
    row: ThreadRecord,
    access: Access,
    context: AccessContext = "threads.read",
) -> AsyncGenerator[AnyGraph | None, None]:
    """The thread's graph (metadata.graph_id), or None for a thread that never ran."""
    graph_id = row.metadata.get("graph_id")
    if not isinstance(graph_id, str) or not graph_id:
        yield None
        return
    require_graph(runtime.graphs, graph_id)
    config: RunnableConfig = {"configurable": {"thread_id": row.thread_id, "graph_id": graph_id}}
    request = GraphRequest(
        access=context,
        config=config,
        user=graph_user(access.principal),
    )
    async with runtime.graphs.graph(graph_id, request) as graph:
        yield graph


@contextlib.contextmanager
def _bad_update() -> Generator[None]:
    """An update LangGraph rejects (unknown `as_node`, a value its channels refuse...) is the
    client's error, as the reference answers."""
    try:
        yield
    except (InvalidUpdateError, ValueError, KeyError, TypeError) as exc:
        raise InvalidRequest(f"Invalid state update: {exc}") from None


def _check_idle(thread_id: str, status: str | None) -> None:
    if status is None:
        raise NotFound.of("Thread", thread_id)
    if status == "busy":  # a run of any replica (one of a dead process: recovery settles it)
        raise ThreadBusy(thread_id)


@contextlib.asynccontextmanager
async def idle_turn(runtime: AppRuntime, thread_id: str) -> AsyncGenerator[SaveCache, None]:
    """Hold an idle thread for the block (see the module doc); `ThreadBusy` if a run is in
    flight or another state update holds it. Yields how to store the thread row's cached
    state (on PostgreSQL that also ends the turn)."""
    async with runtime.runs.thread_turn(
        thread_id, busy=lambda run_id: ThreadBusy(thread_id, run_id)
    ):
        if runtime.db.is_sqlite:
            _check_idle(thread_id, await runtime.db.read(lambda c: repo.status_of(c, thread_id)))

            async def save_apart(cache: CachedState) -> None:
                await runtime.db.write(
                    lambda conn: repo.set_fields(
                        conn, thread_id, values=cache[0], interrupts=cache[1]
                    )
                )

            yield save_apart
            return
        async with _database_turn(runtime, thread_id) as save:
            yield save


@contextlib.asynccontextmanager
async def _database_turn(runtime: AppRuntime, thread_id: str) -> AsyncGenerator[SaveCache, None]:
    """PostgreSQL: the thread's turn in the database, for every replica (`take_turn`): two
    short transactions around the update, none held open while the checkpointer writes on
    its own connection. A replica that dies within its turn loses it after runs.lease_s."""
    hold_s = runtime.config.runs.lease_s
    status, held = await runtime.db.write(lambda c: repo.take_turn(c, thread_id, hold_s=hold_s))
    if held:
        raise ThreadBusy(thread_id, doing="another state update is in progress")
    _check_idle(thread_id, status)
    ended = False

    async def save_ending_turn(cache: CachedState) -> None:
        nonlocal ended
        stmt = repo.set_fields_stmt(thread_id, values=cache[0], interrupts=cache[1])
        await runtime.db.write(lambda conn: conn.execute(stmt.values(turn_until=None)))
        ended = True

    try:
        yield save_ending_turn
    finally:
        if not ended:
            try:
                await runtime.db.write(lambda conn: conn.execute(repo.end_turn_stmt(thread_id)))
            except Exception:  # it lapses on its own; the update's own error matters more
                log.warning("a thread's turn was not ended; it lapses", exc_info=True)


async def refresh_cache(runtime: AppRuntime, thread_id: str, graph: AnyGraph) -> None:
    cache = await st.current_cache(graph, thread_id)
    await runtime.db.write(
        lambda conn: repo.set_fields(conn, thread_id, values=cache[0], interrupts=cache[1])
    )


async def apply_supersteps(
    runtime: AppRuntime, access: Access, thread_id: str, supersteps: list[dict[str, object]]
) -> None:
    """Apply `supersteps` to a new thread (one no run can know yet) and cache its state."""
    row = await load_thread(runtime, access, thread_id)
    async with thread_graph(runtime, row, access, "threads.update") as graph:
        if graph is None:  # creating the thread checked this; its metadata may have changed
            raise Unprocessable("supersteps need a known graph_id (in the body or metadata)")
        with _bad_update():
            await st.apply_supersteps(graph, thread_id, supersteps)
        await refresh_cache(runtime, thread_id, graph)


async def read_state(
    runtime: AppRuntime,
    access: Access,
    thread_id: str,
    checkpoint: dict[str, object] | str | None,
    *,
    subgraphs: bool,
) -> dict[str, object]:
    """ThreadState at the latest (or the given) checkpoint; `NotFound` for an unknown one."""
    row = await load_thread(runtime, access, thread_id)
    async with thread_graph(runtime, row, access) as graph:
        if graph is None:
            if checkpoint:
                raise NotFound.of("Checkpoint", str(checkpoint))
            return st.empty_state(row.thread_id)
        state = await st.read_state(graph, row.thread_id, checkpoint, subgraphs=subgraphs)
    if state is None:
        raise NotFound.of("Checkpoint", str(checkpoint))
    return state


async def read_history(
    runtime: AppRuntime,
    access: Access,
    thread_id: str,
    *,
    limit: int,
    before: dict[str, object] | str | None = None,
    metadata: dict[str, object] | None = None,
    checkpoint: dict[str, object] | None = None,
) -> list[dict[str, object]]:
    """The thread's states, newest first (none for a thread that never ran)."""
    row = await load_thread(runtime, access, thread_id)
    async with thread_graph(runtime, row, access) as graph:
        if graph is None:
            return []
        return await st.read_history(
            graph,
            row.thread_id,
            limit=limit,
            before=before,
            metadata=metadata,
            checkpoint=checkpoint,
        )


async def update_state(
    runtime: AppRuntime,
    access: Access,
    thread_id: str,
    values: object,
    *,
    as_node: str | None,
    checkpoint: dict[str, object] | str | None,
) -> dict[str, object]:
    """Apply an update through the graph's reducers on an idle thread; the new checkpoint.
    `ThreadBusy` while a run is in flight, `InvalidRequest` for an update the graph rejects."""
    row = await load_thread(runtime, access, thread_id, "update")
    async with thread_graph(runtime, row, access, "threads.update") as graph:
        if graph is None:
            raise InvalidRequest("Thread has no graph yet: run it first or create it with graph_id")
        async with idle_turn(runtime, row.thread_id) as save_cache:
            with _bad_update():
                result = await st.update_state(
                    graph, row.thread_id, values, as_node=as_node, checkpoint=checkpoint
                )
            await save_cache(await st.current_cache(graph, row.thread_id))
    return result
