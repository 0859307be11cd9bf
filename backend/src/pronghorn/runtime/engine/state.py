"""LangGraph ``StateSnapshot`` → the API's ThreadState, and the thread row's cached state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Interrupt, PregelTask, StateSnapshot, StateUpdate

from pronghorn.graphs.registry import AnyGraph
from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.runtime.events.serialization import to_jsonable

CachedInterrupts = dict[str, list[dict[str, object]]]
"""The thread row's cached interrupts: ``{task_id: [{id, value}]}``."""


def checkpoint_of(config: RunnableConfig | None) -> dict[str, object] | None:
    """``{thread_id, checkpoint_ns, checkpoint_id, checkpoint_map}`` of a checkpoint config."""
    if not config:
        return None
    conf = config.get("configurable") or {}
    out: dict[str, object] = {
        "thread_id": conf.get("thread_id"),
        "checkpoint_ns": conf.get("checkpoint_ns", "") or "",
        "checkpoint_id": conf.get("checkpoint_id"),
    }
    if conf.get("checkpoint_map") is not None:
        out["checkpoint_map"] = conf["checkpoint_map"]
    return out


def interrupt_json(item: Interrupt) -> dict[str, object]:
    return {"id": getattr(item, "id", None), "value": to_jsonable(item.value)}


def _task_json(task: PregelTask) -> dict[str, object]:
    state: dict[str, object] | None = None
    checkpoint: dict[str, object] | None = None
    if isinstance(task.state, StateSnapshot):
        state = snapshot_to_state(task.state)
    elif task.state is not None:  # a subgraph task's config
        checkpoint = checkpoint_of(task.state)
    return {
        "id": task.id,
        "name": task.name,
        "path": to_jsonable(list(cast("tuple[object, ...]", task.path))),
        "error": repr(task.error) if task.error is not None else None,
        "interrupts": [interrupt_json(i) for i in task.interrupts],
        "checkpoint": checkpoint,
        "state": state,
        "result": to_jsonable(task.result) if task.result is not None else None,
    }


def snapshot_to_state(snapshot: StateSnapshot) -> dict[str, object]:
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


def empty_state(thread_id: str) -> dict[str, object]:
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


def cached_values(values: object) -> dict[str, object]:
    """A thread's values as its row caches them: the JSON of a state object, or
    ``{"__root__": value}`` for any other value (None: no values, ``{}``)."""
    jsonable: object = to_jsonable(values) if values is not None else {}
    if isinstance(jsonable, dict):
        return cast("dict[str, object]", jsonable)  # decoded JSON: its keys are strings
    return {"__root__": jsonable}


def thread_values_and_interrupts(
    snapshot: StateSnapshot,
) -> tuple[dict[str, object], CachedInterrupts]:
    """``(values, {task_id: [{id, value}]})`` for the thread row's cached state."""
    values = cached_values(snapshot.values)
    interrupts: CachedInterrupts = {}
    for task in snapshot.tasks:
        if task.interrupts:
            interrupts[task.id] = [interrupt_json(i) for i in task.interrupts]
    return values, interrupts


def select_fields(state: JsonObject, select: list[str] | None) -> JsonObject:
    """Apply a ``select`` list: top-level field names keep only those fields;
    ``values.<key>`` entries keep only those keys of ``values``."""
    if not select:
        return state
    value_keys = [f.split(".", 1)[1] for f in select if f.startswith("values.")]
    top = [f for f in select if not f.startswith("values.")]
    out = {k: v for k, v in state.items() if k in top} if top else dict(state)
    if value_keys:
        values = json_object(state.get("values") or {})
        if values is not None:
            out["values"] = {k: values[k] for k in value_keys if k in values}
    return out


# --- thread state operations (graph-bound; never call these inside a database unit) --------


Checkpoint = JsonObject | str | None
"""A checkpoint as a request names it: its id, a flat ``{checkpoint_id, checkpoint_ns, ...}``
or ``{"configurable": {...}}`` (None: the latest)."""


def _configurable(thread_id: str, checkpoint: Checkpoint) -> dict[str, object]:
    configurable: dict[str, object] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if isinstance(checkpoint, str):
        configurable["checkpoint_id"] = checkpoint
    elif checkpoint is not None:
        source = json_object(checkpoint.get("configurable")) or checkpoint
        for key in ("checkpoint_id", "checkpoint_ns", "checkpoint_map"):
            if source.get(key) is not None:
                configurable[key] = source[key]
    return configurable


def state_config(thread_id: str, checkpoint: Checkpoint = None) -> RunnableConfig:
    """A graph config addressing a thread, optionally at a checkpoint (see ``Checkpoint``)."""
    return {"configurable": _configurable(thread_id, checkpoint)}


async def read_state(
    graph: AnyGraph, thread_id: str, checkpoint: Checkpoint, *, subgraphs: bool
) -> dict[str, object] | None:
    """ThreadState at the latest (or the given) checkpoint; None when that checkpoint is
    unknown, the empty state when the thread has none yet."""
    configurable = _configurable(thread_id, checkpoint)
    snapshot = await graph.aget_state({"configurable": configurable}, subgraphs=subgraphs)
    if snapshot.created_at is None:  # no such checkpoint
        return None if "checkpoint_id" in configurable else empty_state(thread_id)
    return snapshot_to_state(snapshot)


async def read_history(
    graph: AnyGraph,
    thread_id: str,
    *,
    limit: int,
    before: Checkpoint,
    metadata: JsonObject | None,
    checkpoint: JsonObject | None,
) -> list[dict[str, object]]:
    """Snapshots newest first (``before`` accepts both the flat and the configurable form)."""
    configurable = _configurable(thread_id, checkpoint)
    configurable.pop("checkpoint_id", None)
    before_config: RunnableConfig | None = None
    if before:
        before_configurable = _configurable(thread_id, before)
        before_configurable["checkpoint_ns"] = configurable["checkpoint_ns"]
        before_config = {"configurable": before_configurable}
    out: list[dict[str, object]] = []
    async for snapshot in graph.aget_state_history(
        {"configurable": configurable},
        filter=dict(metadata) if metadata else None,
        before=before_config,
        limit=limit,
    ):
        out.append(snapshot_to_state(snapshot))
    return out


async def update_state(
    graph: AnyGraph,
    thread_id: str,
    values: object,
    *,
    as_node: str | None,
    checkpoint: Checkpoint,
) -> dict[str, object]:
    """Apply an update through the graph's reducers; the new checkpoint's config."""
    config = state_config(thread_id, checkpoint)
    new_config = await graph.aupdate_state(config, values, as_node=as_node)
    return {"checkpoint": checkpoint_of(new_config)}


def _state_update(update: object) -> StateUpdate:
    """One ``{values, command, as_node}`` of a superstep as LangGraph applies it."""
    fields = json_object(update)
    if fields is None:
        raise TypeError("a superstep's update must be an object")
    values = fields.get("values")
    command = json_object(fields.get("command") or {})
    if values is None and command is not None:
        values = command.get("update")
    as_node = fields.get("as_node")
    if as_node is not None and not isinstance(as_node, str):
        raise TypeError("as_node must be a string")
    # Any: StateUpdate annotates a dict; LangGraph applies any value (as aupdate_state does)
    update_values: Any = values
    return StateUpdate(update_values, as_node)


async def apply_supersteps(
    graph: AnyGraph, thread_id: str, supersteps: Sequence[JsonObject]
) -> None:
    """Apply ``[{"updates": [{values, command, as_node}]}]`` in order, one superstep each."""
    steps: list[list[StateUpdate]] = []
    for step in supersteps:
        step_updates: object = step.get("updates") or []
        if not isinstance(step_updates, list):
            raise TypeError("a superstep's updates must be a list")
        steps.append([_state_update(u) for u in cast("list[object]", step_updates)])
    if steps:
        await graph.abulk_update_state(state_config(thread_id), steps)


async def current_cache(
    graph: AnyGraph, thread_id: str
) -> tuple[dict[str, object], CachedInterrupts]:
    """The thread row's cached ``(values, interrupts)`` from the latest checkpoint."""
    snapshot = await graph.aget_state(state_config(thread_id))
    return thread_values_and_interrupts(snapshot)
