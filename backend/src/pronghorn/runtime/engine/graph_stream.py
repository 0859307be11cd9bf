"""Run a graph and turn what it streams into named API events.

Event names follow the LangGraph Platform API: the stream mode, or `mode|ns1|ns2` for
subgraph events; `messages-tuple` travels as `messages` with `[message, metadata]`; the
legacy `messages` mode becomes `messages/metadata`, `messages/partial` and
`messages/complete`; `events` are astream_events v2 dicts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, cast

from langchain_core.messages import BaseMessage, BaseMessageChunk
from langchain_core.runnables import RunnableConfig
from langgraph.channels.untracked_value import (  # pyright: ignore[reportMissingTypeStubs]
    UntrackedValue,
)

from pronghorn.graphs.context_keys import filter_context
from pronghorn.graphs.registry import AnyGraph
from pronghorn.persistence.records.json_object import JsonObject

Emit = Callable[[str, object], Awaitable[None]]
"""Sends one API event: its name and its data (JSON once serialized)."""

NodeInterrupts = list[str] | Literal["*"] | None
"""A run's ``interrupt_before``/``interrupt_after``: node names, every node, or none."""


class StreamedState:
    """What a run's own stream says about the thread's state when the run ends: the last
    root ``values`` chunk and whether an interrupt showed. ``final_values`` is that state
    when the stream can vouch for it — the graph's ``values`` chunks carry every state
    channel (no output schema narrower than the state), no static interrupt is set, none
    showed — and None otherwise (then read the checkpoint)."""

    __slots__ = ("eligible", "interrupted", "seen", "values")

    def __init__(self) -> None:
        self.eligible = False
        self.interrupted = False
        self.seen = False
        self.values: object = None

    def watch(
        self, graph: AnyGraph, interrupt_before: NodeInterrupts, interrupt_after: NodeInterrupts
    ) -> None:
        output = graph.output_channels
        self.eligible = (
            not isinstance(output, str)
            and list(output) == list(graph.stream_channels_asis)
            and not graph.interrupt_before_nodes
            and not graph.interrupt_after_nodes
            and not interrupt_before
            and not interrupt_after
            # an untracked channel shows in the stream but is never checkpointed
            and not any(
                isinstance(c, UntrackedValue)
                for c in cast(dict[str, object], graph.channels).values()
            )
        )

    def observe(self, mode: str, data: object) -> None:
        if isinstance(data, dict) and "__interrupt__" in data:
            self.interrupted = True
        if mode == "values":
            self.seen = True
            self.values = data

    @property
    def final_values(self) -> dict[str, object] | None:
        if not (self.eligible and self.seen) or self.interrupted:
            return None
        if not isinstance(self.values, dict):
            return None
        return cast(dict[str, object], self.values)  # a values chunk: keyed by channel name


def native_modes(modes: list[str]) -> list[str]:
    """The LangGraph stream modes needed to serve the requested API modes."""
    out: list[str] = []
    for mode in modes:
        if mode == "events":
            continue
        native = "messages" if mode in ("messages", "messages-tuple") else mode
        if native not in out:
            out.append(native)
    if "messages" in modes and "updates" not in out:
        out.append("updates")  # node boundaries close partial messages
    return out


class _LegacyMessages:
    """Accumulates chunks per message id for the legacy `messages` mode."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self.partial: dict[str, BaseMessageChunk] = {}

    async def on_message(
        self, name_suffix: str, message: BaseMessage, meta: dict[str, object]
    ) -> None:
        msg_id = message.id or ""
        if isinstance(message, BaseMessageChunk):
            acc = self.partial.get(msg_id)
            if acc is None:
                await self.emit(f"messages/metadata{name_suffix}", {msg_id: {"metadata": meta}})
                acc = message
            else:
                acc = acc + message
            self.partial[msg_id] = acc
            await self.emit(f"messages/partial{name_suffix}", [acc])
            if getattr(message, "chunk_position", None) == "last":
                self.partial.pop(msg_id, None)
                await self.emit(f"messages/complete{name_suffix}", [acc])
        else:
            if msg_id not in self.partial:
                await self.emit(f"messages/metadata{name_suffix}", {msg_id: {"metadata": meta}})
            self.partial.pop(msg_id, None)
            await self.emit(f"messages/complete{name_suffix}", [message])

    async def flush(self, name_suffix: str = "") -> None:
        pending, self.partial = self.partial, {}
        for acc in pending.values():
            await self.emit(f"messages/complete{name_suffix}", [acc])


async def stream_graph(
    graph: AnyGraph,
    graph_input: object,
    config: RunnableConfig,
    *,
    modes: list[str],
    emit: Emit,
    subgraphs: bool = False,
    context: JsonObject | None = None,
    interrupt_before: NodeInterrupts = None,
    interrupt_after: NodeInterrupts = None,
    durability: str | None = None,
    state: StreamedState | None = None,
) -> None:
    requested = set(modes)
    native = native_modes(modes) or ["values"]
    if state is not None and "events" not in requested:
        state.watch(graph, interrupt_before, interrupt_after)
        if state.eligible and "values" not in native:
            native.append("values")  # only to know the final state; not sent
    else:
        state = None
    legacy = _LegacyMessages(emit) if "messages" in requested else None
    # Any: keyword arguments passed through to Pregel.astream / astream_events as they are
    kwargs: dict[str, Any] = {
        "stream_mode": native,
        "subgraphs": subgraphs,
        "interrupt_before": interrupt_before,
        "interrupt_after": interrupt_after,
    }
    if context is not None:  # `{}` too: LangGraph fills the context_schema's defaults from it
        # Keys the graph's context schema does not declare are dropped, as the reference
        # server drops them (instead of the schema's constructor failing the run).
        kwargs["context"] = filter_context(graph.context_schema, context)
    if durability:
        kwargs["durability"] = durability

    async def dispatch(ns: tuple[str, ...], mode: str, data: object) -> None:
        if state is not None and not ns:
            state.observe(mode, data)
        suffix = "|" + "|".join(ns) if ns else ""
        if mode == "messages":
            # LangGraph's `messages` mode streams (message, metadata) pairs
            message, meta = cast("tuple[BaseMessage, dict[str, object]]", data)
            if "messages-tuple" in requested:
                await emit(f"messages{suffix}", [message, meta])
            if legacy is not None:
                await legacy.on_message(suffix, message, meta)
            return
        if mode == "updates" and legacy is not None:
            await legacy.flush(suffix)
            if "updates" not in requested:
                return
        if mode in requested:
            await emit(f"{mode}{suffix}", data)

    async def handle(chunk: object) -> None:
        # LangGraph streams (namespace, mode, data) with subgraphs, (mode, data) without
        if subgraphs:
            ns, mode, data = cast("tuple[tuple[str, ...], str, object]", chunk)
            await dispatch(tuple(ns), mode, data)
        else:
            mode, data = cast("tuple[str, object]", chunk)
            await dispatch((), mode, data)

    if "events" in requested:
        # langchain-core annotates `input` with a bare `Command` (no type argument).
        events = graph.astream_events(  # pyright: ignore[reportUnknownMemberType]
            graph_input, config, version="v2", **kwargs
        )
        async for event in events:
            if event.get("event") == "on_chain_stream" and not event.get("parent_ids"):
                chunk: object = (event.get("data") or {}).get("chunk")
                parts = cast("tuple[object, ...]", chunk) if isinstance(chunk, tuple) else ()
                if len(parts) in (2, 3):
                    await handle(parts)
            await emit("events", event)
    else:
        # langgraph annotates `input` with a bare `Command` (no type argument).
        stream = graph.astream(  # pyright: ignore[reportUnknownMemberType]
            graph_input, config, **kwargs
        )
        async for chunk in stream:
            await handle(chunk)
    if legacy is not None:
        await legacy.flush()
