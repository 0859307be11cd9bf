"""How to call a graph factory: which argument each parameter gets.

As on the reference server, the parameter's type annotation decides:

- ``config: RunnableConfig`` gets the run's (or the read's) config;
- ``runtime: ServerRuntime`` (``langgraph_sdk.runtime``, optionally ``ServerRuntime[Ctx]``)
  gets a server runtime: ``access_context``, ``user``, ``store``, and for a run
  ``.execution_runtime.context`` (the run's context; coerced to ``Ctx`` when that is a
  dataclass or a pydantic model, like LangGraph coerces a graph's ``context_schema``);
- ``request: GraphRequest`` (``pronghorn.graphs``) gets Pronghorn's own request, which also
  carries the config snapshot the run was accepted under.

Without an annotation a parameter named ``runtime`` gets the server runtime, one named
``config`` (or the only parameter, the older one-argument form) gets the config. A required
parameter none of these fit is refused when the graph is loaded, not at the first run.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore
from langgraph_sdk.runtime import ServerRuntime
from pydantic import BaseModel

from pronghorn.graphs.requests import GraphRequest


class FactoryError(Exception):
    """A factory whose parameters cannot be filled."""


class Arg(Enum):
    CONFIG = "config"
    SERVER_RUNTIME = "server_runtime"
    REQUEST = "request"


@dataclass(frozen=True)
class Param:
    name: str
    arg: Arg
    positional: bool  # positional-only; the others are passed by name
    context_type: Any = None  # Ctx of ServerRuntime[Ctx]


def _runtime_classes() -> tuple[type, type]:
    """(execution, read) classes behind the public ``ServerRuntime`` alias: the SDK exports
    only the alias; the class with a ``context`` field is the execution variant."""
    members = [typing.get_origin(a) or a for a in typing.get_args(ServerRuntime.__value__)]
    execution = [m for m in members if "context" in {f.name for f in dataclasses.fields(m)}]
    read = [m for m in members if m not in execution]
    if len(execution) != 1 or len(read) != 1:
        raise RuntimeError(f"unexpected langgraph_sdk ServerRuntime shape: {members}")
    return execution[0], read[0]


EXECUTION_RUNTIME, READ_RUNTIME = _runtime_classes()


def _strip_optional(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def _classify(annotation: Any) -> tuple[Arg | None, Any]:
    ann = _strip_optional(annotation)
    origin = typing.get_origin(ann)
    if ann is ServerRuntime or ann in (EXECUTION_RUNTIME, READ_RUNTIME):
        return Arg.SERVER_RUNTIME, None
    if origin is ServerRuntime or origin in (EXECUTION_RUNTIME, READ_RUNTIME):
        args = typing.get_args(ann)
        return Arg.SERVER_RUNTIME, (args[0] if args else None)
    if ann is RunnableConfig:
        return Arg.CONFIG, None
    if ann is GraphRequest:
        return Arg.REQUEST, None
    return None, None


def _classify_text(text: str) -> Arg | None:
    """Annotations that could not be resolved (forward references): match by name."""
    base = text.replace(" ", "").split("[", 1)[0].rsplit(".", 1)[-1]
    return {
        "ServerRuntime": Arg.SERVER_RUNTIME,
        "RunnableConfig": Arg.CONFIG,
        "GraphRequest": Arg.REQUEST,
    }.get(base)


def plan_call(factory: Callable[..., Any]) -> list[Param]:
    """The parameters to fill for ``factory``; FactoryError for one that cannot be."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError) as exc:
        raise FactoryError(f"cannot inspect the factory's signature: {exc}") from None
    target = inspect.unwrap(factory)
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = getattr(target, "__call__", target)  # noqa: B004 - a callable object
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable forward references: fall back to the annotation text
        hints = {}
    params = [
        p
        for p in signature.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    plan: list[Param] = []
    for p in params:
        positional = p.kind is inspect.Parameter.POSITIONAL_ONLY
        arg, context_type = None, None
        if p.name in hints:
            arg, context_type = _classify(hints[p.name])
        elif isinstance(p.annotation, str):
            arg = _classify_text(p.annotation)
        if arg is None and p.annotation is inspect.Parameter.empty:
            if p.name == "runtime":
                arg = Arg.SERVER_RUNTIME
            elif p.name == "config" or len(params) == 1:
                arg = Arg.CONFIG
        if arg is None:
            if p.default is inspect.Parameter.empty:
                raise FactoryError(
                    f"parameter {p.name!r} of the factory cannot be filled: annotate it "
                    "`RunnableConfig` or `langgraph_sdk.runtime.ServerRuntime`"
                )
            continue  # left to its default
        plan.append(Param(p.name, arg, positional, context_type))
    return plan


def _coerce_context(context_type: Any, context: Mapping[str, Any]) -> Any:
    if isinstance(context_type, type) and (
        dataclasses.is_dataclass(context_type) or issubclass(context_type, BaseModel)
    ):
        return context_type(**dict(context))
    return dict(context)


def server_runtime(request: GraphRequest, store: BaseStore, context_type: Any = None) -> Any:
    """The ``ServerRuntime`` of one access (the execution variant for a run)."""
    if request.executes:
        return EXECUTION_RUNTIME(
            access_context=request.access,
            user=request.user,
            store=store,
            context=_coerce_context(context_type, request.context or {}),
        )
    return READ_RUNTIME(access_context=request.access, user=request.user, store=store)


def call_factory(
    factory: Callable[..., Any], plan: list[Param], request: GraphRequest, store: BaseStore
) -> Any:
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for param in plan:
        if param.arg is Arg.CONFIG:
            value: Any = request.config
        elif param.arg is Arg.REQUEST:
            value = request
        else:
            value = server_runtime(request, store, param.context_type)
        if param.positional:
            args.append(value)
        else:
            kwargs[param.name] = value
    return factory(*args, **kwargs)
