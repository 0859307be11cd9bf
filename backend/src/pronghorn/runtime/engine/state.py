"""LangGraph ``StateSnapshot`` → the API's ThreadState, and the thread row's cached state."""

from __future__ import annotations

from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Interrupt, PregelTask, StateSnapshot

from pronghorn.runtime.events.serialization import to_jsonable


def checkpoint_of(config: RunnableConfig | None) -> dict[str, Any] | None:
    """``{thread_id, checkpoint_ns, checkpoint_id, checkpoint_map}`` of a checkpoint config."""
    if not config:
        return None
    conf = config.get("configurable") or {}
    out: dict[str, Any] = {
        "thread_id": conf.get("thread_id"),
        "checkpoint_ns": conf.get("checkpoint_ns", "") or "",
        "checkpoint_id": conf.get("checkpoint_id"),
    }
    if conf.get("checkpoint_map") is not None:
        out["checkpoint_map"] = conf["checkpoint_map"]
    return out


def interrupt_json(item: Interrupt) -> dict[str, Any]:
    return {"id": getattr(item, "id", None), "value": to_jsonable(item.value)}


def _task_json(task: PregelTask) -> dict[str, Any]:
    state: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    if isinstance(task.state, StateSnapshot):
        state = snapshot_to_state(task.state)
    elif isinstance(task.state, dict):
        checkpoint = checkpoint_of(task.state)  # type: ignore[arg-type]
    return {
        "id": task.id,
        "name": task.name,
        "path": to_jsonable(list(cast("tuple[Any, ...]", task.path))),
        "error": repr(task.error) if task.error is not None else None,
        "interrupts": [interrupt_json(i) for i in task.interrupts],
        "checkpoint": checkpoint,
        "state": state,
        "result": to_jsonable(task.result) if task.result is not None else None,
    }


def snapshot_to_state(snapshot: StateSnapshot) -> dict[str, Any]:
    """The ThreadState JSON of a snapshot (values, next, tasks, metadata, checkpoints...)."""
    checkpoint = checkpoint_of(snapshot.config)
    parent = checkpoint_of(snapshot.parent_config)
    return {
        "values": to_jsonable(snapshot.values) if snapshot.values is not None else {},
        "next": list(snapshot.next),
        "tasks": [_task_json(t) for t in snapshot.tasks],
        "metadata": to_jsonable(snapshot.metadata or {}),
        "created_at": snapshot.created_at,
        "checkpoint": checkpoint,
        "parent_checkpoint": parent,
        "interrupts": [interrupt_json(i) for i in snapshot.interrupts],
        "checkpoint_id": checkpoint["checkpoint_id"] if checkpoint else None,
        "parent_checkpoint_id": parent["checkpoint_id"] if parent else None,
    }


def empty_state(thread_id: str) -> dict[str, Any]:
    """ThreadState of a thread that has no checkpoint yet."""
    return {
        "values": {},
        "next": [],
        "tasks": [],
        "metadata": {},
        "created_at": None,
        "checkpoint": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": None},
        "parent_checkpoint": None,
        "interrupts": [],
        "checkpoint_id": None,
        "parent_checkpoint_id": None,
    }


def thread_values_and_interrupts(
    snapshot: StateSnapshot,
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """``(values, {task_id: [{id, value}]})`` for the thread row's cached state."""
    jsonable: object = to_jsonable(snapshot.values) if snapshot.values is not None else {}
    values: dict[str, Any] = (
        cast("dict[str, Any]", jsonable) if isinstance(jsonable, dict) else {"__root__": jsonable}
    )
    interrupts: dict[str, list[dict[str, Any]]] = {}
    for task in snapshot.tasks:
        if task.interrupts:
            interrupts[task.id] = [interrupt_json(i) for i in task.interrupts]
    return values, interrupts


def select_fields(state: dict[str, Any], select: list[str] | None) -> dict[str, Any]:
    """Apply a ``select`` list: top-level field names keep only those fields;
    ``values.<key>`` entries keep only those keys of ``values``."""
    if not select:
        return state
    value_keys = [f.split(".", 1)[1] for f in select if f.startswith("values.")]
    top = [f for f in select if not f.startswith("values.")]
    out = {k: v for k, v in state.items() if k in top} if top else dict(state)
    if value_keys:
        values: object = state.get("values") or {}
        if isinstance(values, dict):
            kept = cast("dict[str, Any]", values)
            out["values"] = {k: kept[k] for k in value_keys if k in kept}
    return out


# --- thread state operations (graph-bound; never call these inside a database unit) --------


def state_config(thread_id: str, checkpoint: dict[str, Any] | str | None = None) -> dict[str, Any]:
    """A graph config addressing a thread, optionally at a checkpoint. ``checkpoint`` may be a
    checkpoint id, a flat ``{checkpoint_id, checkpoint_ns, ...}`` or ``{"configurable": {...}}``."""
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if isinstance(checkpoint, str):
        configurable["checkpoint_id"] = checkpoint
    elif isinstance(checkpoint, dict):
        inner = checkpoint.get("configurable")
        source = cast("dict[str, Any]", inner) if isinstance(inner, dict) else checkpoint
        for key in ("checkpoint_id", "checkpoint_ns", "checkpoint_map"):
            if source.get(key) is not None:
                configurable[key] = source[key]
    return {"configurable": configurable}


async def read_state(
    graph: Any, thread_id: str, checkpoint: dict[str, Any] | str | None, *, subgraphs: bool
) -> dict[str, Any] | None:
    """ThreadState at the latest (or the given) checkpoint; None when that checkpoint is
    unknown, the empty state when the thread has none yet."""
    config = state_config(thread_id, checkpoint)
    snapshot = await graph.aget_state(config, subgraphs=subgraphs)
    if snapshot.created_at is None:  # no such checkpoint
        return None if "checkpoint_id" in config["configurable"] else empty_state(thread_id)
    return snapshot_to_state(snapshot)


async def read_history(
    graph: Any,
    thread_id: str,
    *,
    limit: int,
    before: dict[str, Any] | str | None,
    metadata: dict[str, Any] | None,
    checkpoint: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    """Snapshots newest first (``before`` accepts both the flat and the configurable form)."""
    config = state_config(thread_id, checkpoint)
    config["configurable"].pop("checkpoint_id", None)
    before_config = None
    if before:
        before_config = state_config(thread_id, before)
        before_config["configurable"]["checkpoint_ns"] = config["configurable"]["checkpoint_ns"]
    out: list[dict[str, Any]] = []
    async for snapshot in graph.aget_state_history(
        config, filter=metadata or None, before=before_config, limit=limit
    ):
        out.append(snapshot_to_state(snapshot))
    return out


async def update_state(
    graph: Any,
    thread_id: str,
    values: Any,
    *,
    as_node: str | None,
    checkpoint: dict[str, Any] | str | None,
) -> dict[str, Any]:
    """Apply an update through the graph's reducers; the new checkpoint's config."""
    config = state_config(thread_id, checkpoint)
    new_config = await graph.aupdate_state(config, values, as_node=as_node)
    return {"checkpoint": checkpoint_of(new_config)}


async def apply_supersteps(graph: Any, thread_id: str, supersteps: list[dict[str, Any]]) -> None:
    """Apply ``[{"updates": [{values, command, as_node}]}]`` in order, one superstep each."""
    from langgraph.types import StateUpdate

    steps: list[list[StateUpdate]] = []
    for step in supersteps:
        updates: list[StateUpdate] = []
        step_updates: list[dict[str, Any]] = step.get("updates") or []
        for update in step_updates:
            values = update.get("values")
            command: object = update.get("command") or {}
            if values is None and isinstance(command, dict):
                values = cast("dict[str, Any]", command).get("update")
            updates.append(StateUpdate(values, update.get("as_node")))
        steps.append(updates)
    if steps:
        await graph.abulk_update_state(state_config(thread_id), steps)


async def current_cache(
    graph: Any, thread_id: str
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The thread row's cached ``(values, interrupts)`` from the latest checkpoint."""
    snapshot = await graph.aget_state(state_config(thread_id))
    return thread_values_and_interrupts(snapshot)
