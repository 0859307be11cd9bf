"""How to call a graph factory: which argument each parameter gets.

The rules are the reference server's (langgraph-api), so a factory written for it loads
here unchanged:

- no parameter: called with nothing;
- one parameter: the server runtime when it is annotated ``ServerRuntime`` (bare,
  ``ServerRuntime[Ctx]``, a string annotation, ``Optional``/``| None``, ``Annotated``, or one
  of the SDK's concrete runtime classes), else the config, whatever its annotation (none,
  ``dict``, ``dict[str, Any]``, ``Mapping``, ``RunnableConfig``...);
- two parameters: exactly one must be annotated ``ServerRuntime``; it gets the runtime and
  the other the config, in either order;
- more parameters, or two of which none (or both) is a ``ServerRuntime``: refused when the
  graph is loaded. Defaults do not change this: every parameter is counted and filled.

Arguments are passed by name, so keyword-only parameters work; a positional-only one (or
``*args``) is passed by position (the reference passes it by name, which fails at the first
run). Pronghorn adds one kind: a parameter annotated ``pronghorn.graphs.GraphRequest`` gets
Pronghorn's own request (with the config snapshot the run was accepted under) and does not
count against the limit above.

``ServerRuntime`` (``langgraph_sdk.runtime``) carries ``access_context``, ``user``, ``store``
and, for a run, ``.execution_runtime.context``: the run's context, coerced to ``Ctx`` when
that is a dataclass or a pydantic model (keys ``Ctx`` does not declare are dropped).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore
from langgraph_sdk.runtime import ServerRuntime
from pydantic import BaseModel

from pronghorn.graphs.context_keys import filter_context
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
    positional: bool  # positional-only (or *args); the others are passed by name
    context_type: object = None  # Ctx of ServerRuntime[Ctx] (a type, or a typing form)


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
_RUNTIME_CLASSES = (EXECUTION_RUNTIME, READ_RUNTIME)

# Names a string annotation may use without importing them at run time (e.g. imported under
# TYPE_CHECKING), as the reference resolves them.
_LOCALNS: dict[str, object] = {
    "ServerRuntime": ServerRuntime,
    "RunnableConfig": RunnableConfig,
    "GraphRequest": GraphRequest,
}


def _runtime_context(annotation: object) -> tuple[bool, object]:
    """(whether ``annotation`` is a ServerRuntime, its ``Ctx`` if subscripted)."""
    if annotation is ServerRuntime:
        return True, None
    if isinstance(annotation, type):
        return issubclass(annotation, _RUNTIME_CLASSES), None
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is ServerRuntime or origin in _RUNTIME_CLASSES:
        return True, (args[0] if args else None)
    if origin is typing.Annotated:
        return _runtime_context(args[0])
    if origin in (typing.Union, types.UnionType):  # Optional[ServerRuntime], X | None
        for arg in args:
            found, ctx = _runtime_context(arg)
            if found:
                return True, ctx
    return False, None


def _is_request(annotation: object) -> bool:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, typing.Annotated):
        return any(_is_request(a) for a in typing.get_args(annotation)[:1])
    return annotation is GraphRequest


def _kind_from_text(text: str) -> Arg | None:
    """An annotation that could not be resolved (a forward reference): by its base name."""
    text = text.replace(" ", "")
    for wrapper in ("typing.Optional[", "Optional[", "typing.Annotated[", "Annotated["):
        text = text.removeprefix(wrapper)
    found = re.match(r"[\w.]+", text)
    base = found.group(0).rsplit(".", 1)[-1] if found else ""
    return {"ServerRuntime": Arg.SERVER_RUNTIME, "GraphRequest": Arg.REQUEST}.get(base)


def _hints(factory: Callable[..., object]) -> dict[str, object]:
    target = inspect.unwrap(factory)
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = getattr(target, "__call__", target)  # noqa: B004 - a callable object
    try:
        return typing.get_type_hints(target, localns=_LOCALNS, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to the annotation text
        return {}


def _kind(p: inspect.Parameter, hints: dict[str, object]) -> tuple[Arg | None, object]:
    """What a parameter is annotated to receive: the runtime (and its Ctx), the request, or
    None (it gets the config if it is the one left)."""
    if p.name in hints:
        annotation = hints[p.name]
        found, ctx = _runtime_context(annotation)
        if found:
            return Arg.SERVER_RUNTIME, ctx
        return (Arg.REQUEST if _is_request(annotation) else None), None
    if isinstance(p.annotation, str):
        return _kind_from_text(p.annotation), None
    return None, None


def plan_call(factory: Callable[..., object]) -> list[Param]:
    """The parameters to fill for ``factory``; FactoryError for one that cannot be."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError) as exc:
        raise FactoryError(f"cannot inspect the factory's signature: {exc}") from None
    hints = _hints(factory)
    params = list(signature.parameters.values())
    kinds = {p.name: _kind(p, hints) for p in params}

    def param(p: inspect.Parameter, arg: Arg) -> Param:
        positional = p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)
        context_type = kinds[p.name][1] if arg is Arg.SERVER_RUNTIME else None
        return Param(p.name, arg, positional, context_type)

    requests = [p for p in params if kinds[p.name][0] is Arg.REQUEST]
    if len(requests) > 1:
        raise FactoryError(f"more than one parameter is annotated GraphRequest: {_names(params)}")
    plan = [param(p, Arg.REQUEST) for p in requests]
    rest = [p for p in params if p not in requests]
    if len(rest) == 1:
        only = rest[0]
        arg = Arg.SERVER_RUNTIME if kinds[only.name][0] is Arg.SERVER_RUNTIME else Arg.CONFIG
        plan.append(param(only, arg))
    elif len(rest) == 2:
        runtimes = [p for p in rest if kinds[p.name][0] is Arg.SERVER_RUNTIME]
        if len(runtimes) != 1:
            raise FactoryError(
                "a factory with two parameters needs exactly one annotated "
                f"`langgraph_sdk.runtime.ServerRuntime` (the other gets the config); got "
                f"{_names(rest)}"
            )
        plan.extend(param(p, Arg.SERVER_RUNTIME if p is runtimes[0] else Arg.CONFIG) for p in rest)
    elif len(rest) > 2:
        raise FactoryError(
            f"a factory takes 0, 1 or 2 parameters (a config and/or a ServerRuntime); got "
            f"{len(rest)}: {_names(rest)}"
        )
    return sorted(plan, key=lambda p: [q.name for q in params].index(p.name))


def _names(params: list[inspect.Parameter]) -> str:
    return ", ".join(repr(str(p).split("=", 1)[0].strip()) for p in params)


def _coerce_context(context_type: object, context: Mapping[str, object]) -> object:
    if isinstance(context_type, type) and (
        dataclasses.is_dataclass(context_type) or issubclass(context_type, BaseModel)
    ):
        return context_type(**filter_context(context_type, context))
    return dict(context)


def server_runtime(request: GraphRequest, store: BaseStore, context_type: object = None) -> object:
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
    factory: Callable[..., object], plan: list[Param], request: GraphRequest, store: BaseStore
) -> object:
    args: list[object] = []
    kwargs: dict[str, object] = {}
    for param in plan:
        if param.arg is Arg.CONFIG:
            value: object = request.config
        elif param.arg is Arg.REQUEST:
            value = request
        else:
            value = server_runtime(request, store, param.context_type)
        if param.positional:
            args.append(value)
        else:
            kwargs[param.name] = value
    return factory(*args, **kwargs)
