"""Graphs by id: built-in ones and those named in config (`module:attr` or `./file.py:attr`).

An entry is either a compiled graph (served as is, with our checkpointer and store attached)
or a factory taking a ``RunnableConfig`` (sync or async, may also return a context manager),
called for each run — the same contract as the ``graphs`` of a ``langgraph.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import inspect
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel

from pronghorn.config.graph_specs import graph_file

BUILTIN_GRAPHS: dict[str, str] = {
    "lead_agent": "pronghorn.graphs.lead_agent:make_graph",
}

# The namespace the reference server uses for system assistant ids (uuid5(NS, graph_id)).
SYSTEM_ASSISTANT_NAMESPACE = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")


def system_assistant_id(graph_id: str) -> str:
    return str(uuid.uuid5(SYSTEM_ASSISTANT_NAMESPACE, graph_id))


class GraphLoadError(Exception):
    pass


@dataclass
class GraphEntry:
    graph_id: str
    spec: str
    target: Any  # a Pregel or a callable factory
    _bound: Pregel | None = field(default=None, repr=False)

    @property
    def is_factory(self) -> bool:
        return not isinstance(self.target, Pregel)


def _load_target(spec: str, base_dir: Path) -> Any:
    if ":" not in spec:
        raise GraphLoadError(
            f"graph spec {spec!r} must look like 'module:attr' or './file.py:attr'"
        )
    path_or_module, _, attr = spec.rpartition(":")
    file = graph_file(spec, base_dir)
    if file is not None:
        if not file.is_file():
            raise GraphLoadError(f"graph file not found: {file}")
        mod_name = f"pronghorn_user_graph_{uuid.uuid5(uuid.NAMESPACE_URL, str(file)).hex}"
        module_spec = importlib.util.spec_from_file_location(mod_name, file)
        if module_spec is None or module_spec.loader is None:
            raise GraphLoadError(f"cannot import {file}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(path_or_module)
    try:
        target: Any = module
        for part in attr.split("."):
            target = getattr(target, part)
    except AttributeError as exc:
        raise GraphLoadError(f"{spec}: no attribute {attr!r}") from exc
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
        self.builtin_context: dict[str, Any] = {}

    async def load(self, specs: dict[str, str]) -> None:
        merged = {**BUILTIN_GRAPHS, **specs}
        entries: dict[str, GraphEntry] = {}
        for graph_id, spec in merged.items():
            target = await asyncio.to_thread(_load_target, spec, self.base_dir)
            entries[graph_id] = GraphEntry(graph_id, spec, target)
        self._entries = entries

    def ids(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, graph_id: str) -> bool:
        return graph_id in self._entries

    def entry(self, graph_id: str) -> GraphEntry:
        try:
            return self._entries[graph_id]
        except KeyError:
            raise KeyError(graph_id) from None

    def _bind(self, graph: Pregel) -> Pregel:
        return graph.copy(update={"checkpointer": self.checkpointer, "store": self.store})

    @contextlib.asynccontextmanager
    async def graph(
        self,
        graph_id: str,
        config: RunnableConfig | None = None,
        context: dict[str, Any] | None = None,
    ) -> AsyncIterator[Pregel]:
        """The runnable graph for one run. Factories get the run's config, and also the
        Pronghorn runtime and the run's context when they declare those parameters."""
        entry = self.entry(graph_id)
        if not entry.is_factory:
            if entry._bound is None:
                entry._bound = self._bind(entry.target)
            yield entry._bound
            return
        factory: Callable[..., Any] = entry.target
        kwargs: dict[str, Any] = {}
        params = inspect.signature(factory).parameters
        if "runtime" in params:
            kwargs["runtime"] = self.builtin_context.get("runtime")
        if "context" in params:
            kwargs["context"] = context or {}
        result = factory(config or {}, **kwargs) if params else factory()
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
