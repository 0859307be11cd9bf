"""How the graph registry calls graph factories (in process, no server)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph_sdk.runtime import (  # the classes behind the ServerRuntime alias, to narrow
    ServerRuntime,
    _ExecutionRuntime,
    _ReadRuntime,
)
from pydantic import BaseModel

from pronghorn.graphs.factory_call import (
    EXECUTION_RUNTIME,
    READ_RUNTIME,
    Arg,
    FactoryError,
    plan_call,
    server_runtime,
)
from pronghorn.graphs.registry import GraphLoadError, GraphRegistry
from pronghorn.graphs.requests import GraphRequest
from testgraphs.react_context import greeter


@dataclass
class Ctx:
    tone: str = "plain"


class ModelCtx(BaseModel):
    tone: str = "plain"


def args_of(factory: Any) -> list[tuple[str, Arg]]:
    return [(p.name, p.arg) for p in plan_call(factory)]


def test_annotations_decide_what_each_parameter_gets() -> None:
    def both(config: RunnableConfig, runtime: ServerRuntime[Ctx]) -> None: ...
    def swapped(rt: ServerRuntime, cfg: RunnableConfig | None = None) -> None: ...
    def ours(request: GraphRequest) -> None: ...
    def keyword_only(*, runtime: ServerRuntime) -> None: ...

    assert args_of(both) == [("config", Arg.CONFIG), ("runtime", Arg.SERVER_RUNTIME)]
    assert args_of(swapped) == [("rt", Arg.SERVER_RUNTIME), ("cfg", Arg.CONFIG)]
    assert args_of(ours) == [("request", Arg.REQUEST)]
    assert args_of(keyword_only) == [("runtime", Arg.SERVER_RUNTIME)]
    assert plan_call(both)[1].context_type is Ctx


def test_the_one_argument_form_and_no_arguments() -> None:
    def legacy(cfg): ...  # type: ignore[no-untyped-def]
    def nothing() -> None: ...

    assert args_of(legacy) == [("cfg", Arg.CONFIG)]
    assert args_of(nothing) == []


def test_unresolvable_annotations_match_by_name() -> None:
    def forward(runtime: ServerRuntime[Missing], config: RunnableConfig) -> None: ...  # type: ignore[name-defined] # noqa: F821

    assert args_of(forward) == [("runtime", Arg.SERVER_RUNTIME), ("config", Arg.CONFIG)]

    def optional(config, runtime: Optional[ServerRuntime[Missing]] = None) -> None: ...  # type: ignore[name-defined,no-untyped-def] # noqa: F821, UP045
    def wrapped(config, runtime: Annotated[ServerRuntime, Missing]) -> None: ...  # type: ignore[name-defined,no-untyped-def] # noqa: F821

    for factory in (optional, wrapped):
        assert args_of(factory) == [("config", Arg.CONFIG), ("runtime", Arg.SERVER_RUNTIME)]


def test_two_parameters_need_one_server_runtime_defaults_or_not() -> None:
    def named(config, runtime): ...  # type: ignore[no-untyped-def]
    def defaulted(config: RunnableConfig, size: int = 3) -> None: ...

    for factory in (named, defaulted):
        with pytest.raises(FactoryError, match="exactly one annotated"):
            plan_call(factory)


def _context(runtime: object) -> object:
    """The context of an execution ``ServerRuntime`` (``server_runtime`` returns ``object``:
    the SDK exports only the alias of its classes)."""
    assert isinstance(runtime, _ExecutionRuntime)
    return runtime.context


def test_server_runtime_for_a_run_and_for_a_read() -> None:
    store = InMemoryStore()
    run = GraphRequest(access="threads.create_run", context={"tone": "dry"})
    rt = server_runtime(run, store, Ctx)
    assert isinstance(rt, EXECUTION_RUNTIME) and isinstance(rt, _ExecutionRuntime)
    assert rt.execution_runtime is rt and rt.context == Ctx(tone="dry")
    assert rt.access_context == "threads.create_run" and rt.store is store and rt.user is None
    assert _context(server_runtime(run, store, ModelCtx)) == ModelCtx(tone="dry")
    assert _context(server_runtime(run, store, None)) == {"tone": "dry"}  # no type: the dict
    empty = GraphRequest(access="threads.create_run")
    assert _context(server_runtime(empty, store, Ctx)) == Ctx()  # no context: the defaults
    read = server_runtime(GraphRequest(access="threads.read"), store, Ctx)
    assert isinstance(read, READ_RUNTIME) and isinstance(read, _ReadRuntime)
    assert read.execution_runtime is None
    # A key the context type does not declare is dropped, as LangGraph drops it for a run.
    odd = GraphRequest(access="threads.create_run", context={"x": 1, "tone": "dry"})
    assert _context(server_runtime(odd, store, Ctx)) == Ctx(tone="dry")
    assert _context(server_runtime(odd, store, ModelCtx)) == ModelCtx(tone="dry")


FACTORY_FILE = """
import contextlib
from langgraph_sdk.runtime import ServerRuntime
from testgraphs.react_context import greeter

CALLS = []

@contextlib.asynccontextmanager
async def make(runtime: ServerRuntime[dict]):
    ert = runtime.execution_runtime
    CALLS.append((runtime.access_context, ert.context if ert else None))
    yield greeter
"""


async def test_registry_calls_factories_per_access_and_binds_graphs_once(
    tmp_path: Path,
) -> None:
    (tmp_path / "made.py").write_text(FACTORY_FILE, encoding="utf-8")
    saver, store = InMemorySaver(), InMemoryStore()
    registry = GraphRegistry(saver, store, base_dir=tmp_path)
    await registry.load({"compiled": "testgraphs.react_context:greeter", "made": "./made.py:make"})
    calls = sys.modules[registry.entry("made").target.__module__].CALLS
    run = GraphRequest(access="threads.create_run", context={"tone": "dry"})
    async with registry.graph("made", run) as graph:
        assert graph.checkpointer is saver and graph.store is store
    async with registry.graph("made", GraphRequest(access="assistants.read")):
        pass
    assert calls == [("threads.create_run", {"tone": "dry"}), ("assistants.read", None)]
    async with registry.graph("compiled", run) as first:
        pass
    async with registry.graph("compiled", GraphRequest(access="threads.read")) as second:
        assert second is first and second.checkpointer is saver


async def test_builtin_graphs_get_the_request_and_user_graphs_win(tmp_path: Path) -> None:
    seen: list[GraphRequest] = []

    def builtin(request: GraphRequest) -> Any:
        seen.append(request)
        return greeter

    registry = GraphRegistry(InMemorySaver(), InMemoryStore(), base_dir=tmp_path)
    await registry.load({"mine": "testgraphs.react_context:greeter"})
    registry.add_builtin("lead", builtin)
    registry.add_builtin("mine", builtin)  # a configured graph with that id wins
    assert registry.ids() == ["lead", "mine"]
    request = GraphRequest(access="threads.read")
    async with registry.graph("lead", request):
        pass
    assert seen == [request]
    assert not registry.entry("mine").is_factory


async def test_a_factory_with_unfillable_parameters_fails_at_load(tmp_path: Path) -> None:
    (tmp_path / "bad_graph.py").write_text(
        "def make(config, size):\n    raise AssertionError('never called')\n", encoding="utf-8"
    )
    registry = GraphRegistry(InMemorySaver(), InMemoryStore(), base_dir=tmp_path)
    with pytest.raises(GraphLoadError, match="'size'"):
        await registry.load({"bad": "./bad_graph.py:make"})
