"""Graphs by id: built-in ones and those named in config (`module:attr` or `./file.py:attr`).

An entry is either a compiled graph (served as is, with our checkpointer and store attached)
or a factory (sync or async, may also return a context manager) called for every access —
each run, state read or update, schema read — with the arguments its annotations ask for
(see ``factory_call``): the same contract as the ``graphs`` of a ``langgraph.json``.
Built-in graphs are factories taking a ``GraphRequest``, added with ``add_builtin``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.pregel import Pregel

from pronghorn.graphs.factory_call import Arg, FactoryError, Param, call_factory, plan_call
from pronghorn.graphs.loading import LoadError, load_object
from pronghorn.graphs.requests import GraphRequest

# A served graph: any state, context, input and output types.
AnyGraph = Pregel[Any, Any, Any, Any]

BuiltinFactory = Callable[[GraphRequest], Any]


def builtin_spec(graph_id: str) -> str:
    """The spec a built-in graph is listed under (``builtin:<id>``)."""
    return f"builtin:{graph_id}"


class GraphLoadError(LoadError):
    pass


@dataclass
class GraphEntry:
    graph_id: str
    spec: str
    target: Any  # a Pregel or a callable factory
    plan: list[Param] = field(default_factory=list)  # how to call a factory
    _bound: Pregel | None = field(default=None, repr=False)

    @property
    def is_factory(self) -> bool:
        return not isinstance(self.target, Pregel)


def _load_target(spec: str, base_dir: Path) -> Any:
    try:
        target = load_object(spec, base_dir)
    except LoadError as exc:
        raise GraphLoadError(f"graph {exc}") from None
    if not isinstance(target, Pregel) and not callable(target):
        raise GraphLoadError(f"{spec} is neither a compiled graph nor a factory")
    return target


class GraphRegistry:
    """Loads graphs once and hands out runnable graphs bound to our checkpointer and store."""

    def __init__(self, checkpointer: Any, store: Any, *, base_dir: Path) -> None:
        self.checkpointer = checkpointer
        self.store = store
        self.base_dir = base_dir
        self._entries: dict[str, GraphEntry] = {}

    async def load(self, specs: dict[str, str]) -> None:
        entries: dict[str, GraphEntry] = {}
        for graph_id, spec in specs.items():
            target = await asyncio.to_thread(_load_target, spec, self.base_dir)
            entry = GraphEntry(graph_id, spec, target)
            if entry.is_factory:
                try:
                    entry.plan = plan_call(target)
                except FactoryError as exc:
                    raise GraphLoadError(f"{spec}: {exc}") from None
            entries[graph_id] = entry
        self._entries = entries

    def add_builtin(self, graph_id: str, factory: BuiltinFactory) -> None:
        """A built-in graph (called with the ``GraphRequest``), unless config names a graph
        with the same id: the user's graph wins."""
        if graph_id in self._entries:
            return
        entry = GraphEntry(
            graph_id, builtin_spec(graph_id), factory, [Param("request", Arg.REQUEST, True)]
        )
        self._entries = {graph_id: entry, **self._entries}  # built-ins list first

    def ids(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, graph_id: str) -> bool:
        return graph_id in self._entries

    def entry(self, graph_id: str) -> GraphEntry:
        try:
            return self._entries[graph_id]
        except KeyError:
            raise KeyError(graph_id) from None

    def _bind(self, graph: Pregel) -> AnyGraph:
        return graph.copy(update={"checkpointer": self.checkpointer, "store": self.store})

    @contextlib.asynccontextmanager
    async def graph(self, graph_id: str, request: GraphRequest) -> AsyncIterator[AnyGraph]:
        """The runnable graph for one access. A compiled graph is bound once and reused; a
        factory is called every time, with what its parameters ask for."""
        entry = self.entry(graph_id)
        if not entry.is_factory:
            if entry._bound is None:
                entry._bound = self._bind(entry.target)
            yield entry._bound
            return
        result = call_factory(entry.target, entry.plan, request, self.store)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, contextlib.AbstractAsyncContextManager):
            async with result as graph:
                yield self._bind(graph)
        elif isinstance(result, contextlib.AbstractContextManager):
            with result as graph:
                yield self._bind(graph)
        else:
            yield self._bind(result)
