"""Graphs by id: built-in ones and those named in config (`module:attr` or `./file.py:attr`).

An entry is either a compiled graph (served as is, with our checkpointer and store attached)
or a factory (sync or async, may also return a context manager) called for every access —
each run, state read or update, schema read — with the arguments its signature asks for
(see ``factory_call``): the same contract as the ``graphs`` of a ``langgraph.json``.
Built-in graphs are factories taking a ``GraphRequest``, added with ``add_builtin``.

A configured graph that fails to load (an import error, a syntax error, a factory whose
signature cannot be served) is recorded as a ``GraphProblem`` instead of taking the others
down; only a start where no configured graph loads fails. ``apply`` swaps in a new set of
specs (or re-imports graphs whose files changed) atomically: a graph that fails to reload
keeps serving its last good version, and a run holds the entry it was accepted with.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver

# langgraph's graph and pregel packages ship without a py.typed marker: pyright reads their
# source (typed), and strict mode would otherwise ask for stubs.
from langgraph.graph import StateGraph  # pyright: ignore[reportMissingTypeStubs]
from langgraph.pregel import Pregel  # pyright: ignore[reportMissingTypeStubs]
from langgraph.store.base import BaseStore

from pronghorn.config.graph_specs import graph_file
from pronghorn.graphs.factory_call import Arg, FactoryError, Param, call_factory, plan_call
from pronghorn.graphs.loading import LoadError, load_spec
from pronghorn.graphs.requests import GraphRequest

log = logging.getLogger("pronghorn.graphs")

# A served graph: any state, context, input and output types (Any: a user's graph declares
# its own, and the server only passes them through).
AnyGraph = Pregel[Any, Any, Any, Any]
AnyStateGraph = StateGraph[Any, Any, Any, Any]  # Any: as AnyGraph (its builder)

BuiltinFactory = Callable[[GraphRequest], object]


def builtin_spec(graph_id: str) -> str:
    """The spec a built-in graph is listed under (``builtin:<id>``)."""
    return f"builtin:{graph_id}"


class GraphLoadError(LoadError):
    def __init__(self, message: str, file: Path | None = None) -> None:
        super().__init__(message)
        self.file = file  # the graph's source file, when known (watched for a fix)


@dataclass
class GraphEntry:
    graph_id: str
    spec: str
    # Any: a compiled graph (AnyGraph) or a factory taking what its plan fills; the loader
    # checked which, and the runtime reads the graph's own members.
    target: Any
    plan: list[Param] = field(default_factory=list)  # how to call a factory
    file: Path | None = None  # its source file (watched for live reload)
    _bound: AnyGraph | None = field(default=None, repr=False)

    @property
    def is_factory(self) -> bool:
        return not isinstance(self.target, Pregel)

    def bound(self, bind: Callable[[AnyGraph], AnyGraph]) -> AnyGraph:
        """The compiled graph, bound by ``bind`` the first time and reused after."""
        if self._bound is None:
            self._bound = bind(self.target)
        return self._bound


@dataclass(frozen=True)
class GraphProblem:
    """A configured graph that failed to load (or to reload)."""

    graph_id: str
    spec: str
    error: str
    previous_serving: bool  # its last good version still serves
    file: Path | None = None  # its source file, when known (watched for a fix)

    def as_dict(self) -> dict[str, object]:
        return {
            "graph_id": self.graph_id,
            "spec": self.spec,
            "error": self.error,
            "previous_serving": self.previous_serving,
        }


@dataclass(frozen=True)
class GraphReload:
    """What one ``apply`` did."""

    at: datetime
    added: list[str]
    changed: list[str]
    removed: list[str]
    failed: list[str]

    def as_dict(self) -> dict[str, object]:
        return {
            "at": self.at.isoformat(),
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "failed": self.failed,
        }


def _describe(exc: BaseException) -> str:
    if isinstance(exc, LoadError):
        return str(exc)
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno})"
    return f"{type(exc).__name__}: {exc}"


def _load_entry(graph_id: str, spec: str, base_dir: Path, reimport: bool) -> GraphEntry:
    """Import and check one configured graph (blocking: call it in a worker thread)."""
    file = graph_file(spec, base_dir) if ":" in spec else None
    try:
        loaded = load_spec(spec, base_dir, reimport=reimport)
    except Exception as exc:  # whatever the user's module raises while it is imported
        where = f"{spec} ({file})" if file is not None else spec
        raise GraphLoadError(f"{where}: {_describe(exc)}", file) from None
    target: object = loaded.target
    uncompiled = _state_graph(target)
    if uncompiled is not None:  # as the reference, an uncompiled graph is compiled
        try:
            target = _compile(uncompiled)
        except Exception as exc:
            message = f"{spec}: the graph does not compile: {_describe(exc)}"
            raise GraphLoadError(message, loaded.file) from None
    if not isinstance(target, Pregel) and not callable(target):
        raise GraphLoadError(f"{spec} is neither a compiled graph nor a factory", loaded.file)
    entry = GraphEntry(graph_id, spec, target, file=loaded.file)
    if entry.is_factory:
        try:
            entry.plan = plan_call(entry.target)
        except FactoryError as exc:
            raise GraphLoadError(f"{spec}: {exc}", loaded.file) from None
    return entry


def check_graph_specs(specs: Mapping[str, str], base_dir: Path) -> list[str]:
    """One message per graph that fails to load (blocking: imports them), for
    ``pronghorn config check``."""
    problems: list[str] = []
    for graph_id, spec in specs.items():
        try:
            _load_entry(graph_id, spec, base_dir, reimport=False)
        except GraphLoadError as exc:
            problems.append(f"graphs.{graph_id}: {exc}")
    return problems


class GraphRegistry:
    """Loads graphs and hands out runnable graphs bound to our checkpointer and store."""

    def __init__(
        self, checkpointer: BaseCheckpointSaver[str], store: BaseStore, *, base_dir: Path
    ) -> None:
        self.checkpointer = checkpointer
        self.store = store
        self.base_dir = base_dir
        self._builtins: dict[str, GraphEntry] = {}
        self._configured: dict[str, GraphEntry] = {}
        self._entries: dict[str, GraphEntry] = {}  # what serves: built-ins, then configured
        self._problems: dict[str, GraphProblem] = {}
        self._lock = asyncio.Lock()  # one apply at a time
        self.last_reload: GraphReload | None = None

    async def _load(self, graph_id: str, spec: str, reimport: bool = False) -> GraphEntry:
        return await asyncio.to_thread(_load_entry, graph_id, spec, self.base_dir, reimport)

    def _publish(self) -> None:
        entries = {k: v for k, v in self._builtins.items() if k not in self._configured}
        self._entries = {**entries, **self._configured}  # one atomic swap for readers

    async def load(self, specs: Mapping[str, str]) -> None:
        """The startup load: a graph that fails is reported (logged, listed by
        ``problems``) while the others serve; if none of the configured graphs loads, this
        raises GraphLoadError (a server whose only graph is broken does not start)."""
        configured: dict[str, GraphEntry] = {}
        problems: dict[str, GraphProblem] = {}
        for graph_id, spec in specs.items():
            try:
                configured[graph_id] = await self._load(graph_id, spec)
            except GraphLoadError as exc:
                problems[graph_id] = GraphProblem(graph_id, spec, str(exc), False, exc.file)
                log.error("graph %r failed to load: %s", graph_id, exc)
        if specs and not configured:
            raise GraphLoadError(
                "no configured graph could be loaded: "
                + "; ".join(f"{p.graph_id}: {p.error}" for p in problems.values())
            )
        self._configured, self._problems = configured, problems
        self._publish()

    async def apply(
        self, specs: Mapping[str, str], changed_files: Iterable[Path] = ()
    ) -> GraphReload:
        """Serve ``specs`` from now on: new and changed entries (and those whose source file
        is in ``changed_files``, or that failed before) are loaded afresh, removed ones
        dropped. A graph that fails to load keeps its last good version, if it had one, and
        is listed by ``problems``. Runs already holding an entry keep it."""
        touched = set(changed_files)  # resolved paths, as `watched_files` gives them
        async with self._lock:
            configured: dict[str, GraphEntry] = {}
            problems: dict[str, GraphProblem] = {}
            added: list[str] = []
            changed: list[str] = []
            for graph_id, spec in specs.items():
                old = self._configured.get(graph_id)
                edited = old is not None and old.file is not None and old.file in touched
                if (
                    old is not None
                    and old.spec == spec
                    and not edited
                    and graph_id not in self._problems
                ):
                    configured[graph_id] = old
                    continue
                try:
                    entry = await self._load(graph_id, spec, reimport=edited)
                except GraphLoadError as exc:
                    problems[graph_id] = GraphProblem(
                        graph_id, spec, str(exc), old is not None, exc.file
                    )
                    if old is not None:
                        configured[graph_id] = old
                        log.error(
                            "graph %r failed to reload, its previous version still serves: %s",
                            graph_id,
                            exc,
                        )
                    else:
                        log.error("graph %r failed to load: %s", graph_id, exc)
                    continue
                configured[graph_id] = entry
                (added if old is None and graph_id not in self._problems else changed).append(
                    graph_id
                )
            before = set(self.known_ids())
            self._configured, self._problems = configured, problems
            self._publish()
            removed = sorted(before - set(self.known_ids()))
            result = GraphReload(datetime.now(UTC), added, changed, removed, sorted(problems))
            self.last_reload = result
            if added or changed or removed or problems:
                log.info(
                    "graphs reloaded: added %s, changed %s, removed %s, failed %s",
                    ",".join(added) or "-",
                    ",".join(changed) or "-",
                    ",".join(removed) or "-",
                    ",".join(sorted(problems)) or "-",
                )
            return result

    def add_builtin(self, graph_id: str, factory: BuiltinFactory) -> None:
        """A built-in graph (called with the ``GraphRequest``), unless config names a graph
        with the same id: the user's graph wins."""
        entry = GraphEntry(
            graph_id, builtin_spec(graph_id), factory, [Param("request", Arg.REQUEST, True)]
        )
        self._builtins = {graph_id: entry, **self._builtins}
        self._publish()

    def ids(self) -> list[str]:
        """The graphs that serve (built-ins first)."""
        return list(self._entries)

    def known_ids(self) -> list[str]:
        """Every graph that serves or is configured but failed to load (each has a system
        assistant)."""
        return [*self._entries, *(g for g in self._problems if g not in self._entries)]

    def problems(self) -> list[GraphProblem]:
        return list(self._problems.values())

    def problem(self, graph_id: str) -> GraphProblem | None:
        return self._problems.get(graph_id)

    def watched_files(self) -> set[Path]:
        """The source files of the configured graphs, loaded or not (for live reload: an
        edit that fixes a broken graph loads it)."""
        files = {e.file for e in self._configured.values() if e.file is not None}
        return files | {p.file for p in self._problems.values() if p.file is not None}

    def specs(self) -> dict[str, str]:
        """The configured specs being served or tried (as last applied)."""
        out = {g: e.spec for g, e in self._configured.items()}
        out.update({g: p.spec for g, p in self._problems.items()})
        return out

    def __contains__(self, graph_id: str) -> bool:
        return graph_id in self._entries

    def entry(self, graph_id: str) -> GraphEntry:
        try:
            return self._entries[graph_id]
        except KeyError:
            raise KeyError(graph_id) from None

    def serving(self, graph_id: str) -> GraphEntry | None:
        """The entry serving ``graph_id`` now (a run keeps it across a reload)."""
        return self._entries.get(graph_id)

    def _bind(self, graph: AnyGraph) -> AnyGraph:
        return graph.copy(update={"checkpointer": self.checkpointer, "store": self.store})

    @contextlib.asynccontextmanager
    async def graph(
        self, graph_id: str, request: GraphRequest, entry: GraphEntry | None = None
    ) -> AsyncGenerator[AnyGraph]:
        """The runnable graph for one access (from ``entry`` when given: the version a run
        was accepted with). A compiled graph is bound once and reused; a factory is called
        every time, with what its parameters ask for."""
        entry = entry if entry is not None else self.entry(graph_id)
        if not entry.is_factory:
            yield entry.bound(self._bind)
            return
        result: object = call_factory(entry.target, entry.plan, request, self.store)
        if inspect.isawaitable(result):
            result = await cast("Awaitable[object]", result)
        if isinstance(result, contextlib.AbstractAsyncContextManager):
            async with cast("contextlib.AbstractAsyncContextManager[object]", result) as graph:
                yield self._bind(_compiled(graph))
        elif isinstance(result, contextlib.AbstractContextManager):
            with cast("contextlib.AbstractContextManager[object]", result) as graph:
                yield self._bind(_compiled(graph))
        else:
            yield self._bind(_compiled(result))


def _state_graph(value: object) -> AnyStateGraph | None:
    """``value`` if it is an uncompiled graph (of any state), else None."""
    return cast(AnyStateGraph, value) if isinstance(value, StateGraph) else None


def _compiled(graph: object) -> AnyGraph:
    """A factory's graph, compiled if it was not; anything else is passed on as the graph
    it should be (running it fails with the library's own error, as before)."""
    uncompiled = _state_graph(graph)
    return _compile(uncompiled) if uncompiled is not None else cast(AnyGraph, graph)


def _compile(graph: AnyStateGraph) -> AnyGraph:
    # LangGraph's ``Checkpointer`` alias in compile's signature leaves out BaseCheckpointSaver's
    # type argument (a library typing gap); we pass no checkpointer here (``_bind`` adds ours).
    return graph.compile()  # pyright: ignore[reportUnknownMemberType]
