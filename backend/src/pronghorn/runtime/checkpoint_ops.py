"""Thread-level checkpoint operations — rollback of a run, pruning, copying — crash-safe.

Each uses the saver's own method when it implements one (`adelete_for_runs`, `aprune`,
`acopy_thread`: detected, as LangGraph does, by whether the class overrides the base), and
otherwise rewrites the saver's tables in one transaction on the app's database
(`persistence/repos/checkpoints.py`), so a crash leaves the old history or the new one,
never a part of it. Today `AsyncPostgresSaver` implements `aprune`; the rest is ours.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import checkpoints as repo


async def list_oldest_first(
    saver: BaseCheckpointSaver[str], thread_id: str
) -> list[CheckpointTuple]:
    """Every checkpoint of a thread (all namespaces), oldest first."""
    items = [t async for t in saver.alist({"configurable": {"thread_id": thread_id}})]
    items.reverse()
    return items


def _implements(saver: BaseCheckpointSaver[str], method: str) -> bool:
    return getattr(type(saver), method) is not getattr(BaseCheckpointSaver, method)


def _tables_of(saver: BaseCheckpointSaver[str]) -> repo.Saver:
    """Which saver's tables these are (the savers `open_persistence` builds, or a subclass of
    LangGraph's: the SQLite worker's saver is LangGraph's `SqliteSaver`)."""
    modules = [cls.__module__ for cls in type(saver).__mro__]
    if any(m.startswith("langgraph.checkpoint.sqlite") for m in modules):
        return "sqlite"
    if any(m.startswith("langgraph.checkpoint.postgres") for m in modules):
        return "postgres"
    raise NotImplementedError(f"{type(saver).__name__} has no crash-safe thread rewrite")


async def delete_run_checkpoints(
    db: Database, saver: BaseCheckpointSaver[str], thread_id: str, run_id: str
) -> None:
    """Drop the checkpoints (and their writes) one run wrote; keep the rest (rollback)."""
    if _implements(saver, "adelete_for_runs"):
        await saver.adelete_for_runs([run_id])
        return
    kind = _tables_of(saver)
    await db.retry(lambda: db.run(lambda c: repo.delete_for_run(c, kind, thread_id, run_id)))


async def keep_latest_checkpoint(
    db: Database, saver: BaseCheckpointSaver[str], thread_id: str
) -> None:
    """Prune a thread to its latest checkpoint per namespace (the `keep_latest` strategy)."""
    if _implements(saver, "aprune"):
        await saver.aprune([thread_id], strategy="keep_latest")
        return
    kind = _tables_of(saver)
    await db.retry(lambda: db.run(lambda c: repo.keep_latest(c, kind, thread_id)))


async def copy_thread(
    db: Database,
    saver: BaseCheckpointSaver[str],
    src: str,
    dst: str,
    *,
    with_unit: Callable[[Connection], Any] | None = None,
) -> None:
    """Copy every checkpoint (and pending write) of thread `src` to `dst`. `with_unit` (e.g.
    inserting the new thread's row) commits in the same transaction — or, with a saver's
    own `acopy_thread`, right after it, so no thread ever points at a partial copy."""
    if _implements(saver, "acopy_thread"):
        await saver.acopy_thread(src, dst)
        if with_unit is not None:
            await db.retry(lambda: db.run(with_unit))
        return
    kind = _tables_of(saver)

    def unit(conn: Connection) -> None:
        repo.copy_thread(conn, kind, src, dst)
        if with_unit is not None:
            with_unit(conn)

    await db.retry(lambda: db.run(unit))
