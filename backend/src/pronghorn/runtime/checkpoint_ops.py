"""Thread-level checkpoint operations written generically over ``BaseCheckpointSaver``.

The SQLite and PostgreSQL savers do not implement ``acopy_thread`` / ``aprune``, so these
work with the calls every saver has: ``alist`` (newest first), ``aput``, ``aput_writes`` and
``adelete_thread``. Checkpoints keep their ids; parent links are re-pointed at the nearest
kept ancestor when some checkpoints are dropped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple


async def list_oldest_first(saver: BaseCheckpointSaver, thread_id: str) -> list[CheckpointTuple]:
    """Every checkpoint of a thread (all namespaces), oldest first."""
    items = [t async for t in saver.alist({"configurable": {"thread_id": thread_id}})]
    items.reverse()
    return items


def _ns(t: CheckpointTuple) -> str:
    return t.config["configurable"].get("checkpoint_ns", "") or ""


def _parent_id(t: CheckpointTuple) -> str | None:
    if not t.parent_config:
        return None
    return t.parent_config["configurable"].get("checkpoint_id")


async def _put_all(
    saver: BaseCheckpointSaver,
    thread_id: str,
    tuples: list[CheckpointTuple],
    parent_of: Callable[[CheckpointTuple], str | None],
) -> int:
    """Write ``tuples`` (oldest first) under ``thread_id`` with their pending writes."""
    for t in tuples:
        ns = _ns(t)
        configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
        parent = parent_of(t)
        if parent is not None:
            configurable["checkpoint_id"] = parent
        checkpoint = t.checkpoint
        metadata = dict(t.metadata or {})
        saved = await saver.aput(
            {"configurable": configurable},
            checkpoint,
            metadata,  # type: ignore[arg-type]
            dict(checkpoint.get("channel_versions") or {}),
        )
        if t.pending_writes:
            by_task: dict[str, list[tuple[str, Any]]] = defaultdict(list)
            for task_id, channel, value in t.pending_writes:
                by_task[task_id].append((channel, value))
            for task_id, writes in by_task.items():
                await saver.aput_writes(saved, writes, task_id)
    return len(tuples)


async def copy_thread(saver: BaseCheckpointSaver, src: str, dst: str) -> int:
    """Copy every checkpoint (and its pending writes) of thread ``src`` to ``dst``.
    Returns the number of checkpoints copied."""
    tuples = await list_oldest_first(saver, src)
    return await _put_all(saver, dst, tuples, _parent_id)


def _keep_filter_parents(
    tuples: list[CheckpointTuple], kept: list[CheckpointTuple]
) -> Callable[[CheckpointTuple], str | None]:
    """Parent of a kept checkpoint = its nearest ancestor that is also kept."""
    by_key = {(_ns(t), t.checkpoint["id"]): t for t in tuples}
    kept_keys = {(_ns(t), t.checkpoint["id"]) for t in kept}

    def parent_of(t: CheckpointTuple) -> str | None:
        ns = _ns(t)
        parent = _parent_id(t)
        seen: set[str] = set()
        while parent is not None and (ns, parent) not in kept_keys and parent not in seen:
            seen.add(parent)
            ancestor = by_key.get((ns, parent))
            parent = _parent_id(ancestor) if ancestor is not None else None
        return parent

    return parent_of


async def delete_run_checkpoints(saver: BaseCheckpointSaver, thread_id: str, run_id: str) -> int:
    """Drop the checkpoints written by one run (metadata.run_id == run_id); keep the rest.
    Returns the number of checkpoints removed."""
    tuples = await list_oldest_first(saver, thread_id)
    kept = [t for t in tuples if (t.metadata or {}).get("run_id") != run_id]
    removed = len(tuples) - len(kept)
    if removed == 0:
        return 0
    await saver.adelete_thread(thread_id)
    await _put_all(saver, thread_id, kept, _keep_filter_parents(tuples, kept))
    return removed


async def keep_latest_checkpoint(saver: BaseCheckpointSaver, thread_id: str) -> int:
    """Prune a thread to its latest checkpoint per namespace (the ``keep_latest`` strategy).
    Returns the number of checkpoints removed."""
    tuples = await list_oldest_first(saver, thread_id)
    latest: dict[str, CheckpointTuple] = {}
    for t in tuples:
        latest[_ns(t)] = t  # oldest first, so the last one wins
    kept = list(latest.values())
    removed = len(tuples) - len(kept)
    if removed == 0:
        return 0
    await saver.adelete_thread(thread_id)
    await _put_all(saver, thread_id, kept, lambda _t: None)
    return removed
