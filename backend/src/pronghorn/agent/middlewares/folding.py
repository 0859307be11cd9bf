"""Fold node hooks into few graph steps: one checkpoint per step, not one per hook.

``create_agent`` makes every ``before_agent``/``before_model``/``after_model``/
``after_agent`` hook its own graph node, and every node a checkpoint: with a dozen
middlewares a "hi" turn wrote 11 checkpoints and each tool round 7 more. A client that
reads a bounded history (a popular chat client asks for 10 entries) then cannot find the
checkpoint before the user's message, so edit and regenerate fork from the wrong place.

:func:`fold_hooks` keeps every middleware and its hooks as they are and changes only how
they are scheduled, giving the graph the shape of LangGraph's prebuilt ReAct agent
(``__start__`` → ``TurnStart`` → ``model`` ⇄ ``tools``):

* all ``before_agent`` hooks run in list order in **one** node, ``TurnStart.before_agent``;
* ``before_model`` hooks (list order), ``after_model`` hooks (reverse list order) and,
  when the response ends the run, ``after_agent`` hooks (reverse list order) run inside
  the model node, in :class:`ModelStep`, the outermost ``wrap_model_call``: exactly where
  ``create_agent`` would have run them relative to the wrappers. Their state writes are
  applied with the state's reducers (``ExtendedModelResponse`` commands); a rewritten AI
  message (same id) replaces the model's in the node's output, so the tool router sees it;
* every middleware is passed to ``create_agent`` as a facade with its ``wrap_*`` hooks
  only (same name, tools, state schema and stream transformers).

A later hook sees the state as earlier hooks left it (their writes applied through the
reducers), as it did across nodes. Hooks that declare jumps (``@hook_config(can_jump_to=``)
cannot be folded and are refused when the chain is built.
"""

from __future__ import annotations

import inspect
import typing
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain.agents import AgentState
from langchain.agents.middleware import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from pronghorn.agent.state import ThreadState
from pronghorn.agent.tool_types import ToolResult

# Any: a chain mixes middlewares of different state, context and response types (LangChain
# declares each one's own); the fold only calls their hooks.
Middleware = AgentMiddleware[Any, Any, Any]
# Any: a state channel's reducer takes and returns whatever that channel holds (each one
# declares its own channel's type).
Reducer = Callable[[Any, Any], Any]
# A hook's update: channel name → the value its reducer combines.
Update = dict[str, object]
HOOKS = ("before_agent", "before_model", "after_model", "after_agent")


def overrides(m: Middleware, hook: str) -> bool:
    """``m`` implements ``hook`` (its sync or its async variant), as ``create_agent`` asks."""
    return any(
        getattr(type(m), name, None) is not getattr(AgentMiddleware, name)
        for name in (hook, f"a{hook}")
    )


def _own(m: Middleware, name: str) -> bool:
    return getattr(type(m), name, None) is not getattr(AgentMiddleware, name)


def _unwrap(hint: object) -> object:
    """``NotRequired[Annotated[T, r]]`` → ``Annotated[T, r]``."""
    while typing.get_origin(hint) in (typing.NotRequired, typing.Required):
        hint = typing.get_args(hint)[0]
    return hint


def state_reducers(schema: type) -> dict[str, Reducer]:
    """The reducer of each key of a state ``TypedDict`` (keys without one: last value)."""
    out: dict[str, Reducer] = {}
    for key, hint in typing.get_type_hints(schema, include_extras=True).items():
        hint = _unwrap(hint)
        if typing.get_origin(hint) is typing.Annotated:
            metadata: tuple[object, ...] = getattr(hint, "__metadata__", ())
            reducer = next((a for a in reversed(metadata) if callable(a)), None)
            if reducer is not None:
                out[key] = cast(Reducer, reducer)
    return out


@dataclass(frozen=True)
class Writes:
    """State writes collected from hooks, combined with the state's reducers."""

    reducers: Mapping[str, Reducer]
    values: Update = field(default_factory=dict[str, object])

    def apply(self, state: Mapping[str, object], update: Update) -> dict[str, object]:
        """``state`` with ``update`` applied; ``update`` is also recorded here."""
        new = dict(state)
        for key, value in update.items():
            reducer = self.reducers.get(key)
            new[key] = reducer(new.get(key), value) if reducer is not None else value
            if key in self.values and reducer is not None:
                self.values[key] = reducer(self.values[key], value)
            else:
                self.values[key] = value
        return new


def _check_no_jumps(m: Middleware, hook: str) -> None:
    for name in (hook, f"a{hook}"):
        if getattr(getattr(type(m), name, None), "__can_jump_to__", None):
            msg = f"{m.name}.{hook} can jump; a folded hook cannot (give it its own graph)"
            raise ValueError(msg)


async def _call_async(
    m: Middleware, hook: str, state: Mapping[str, object], runtime: Runtime
) -> Update | None:
    if _own(m, f"a{hook}"):
        return await getattr(m, f"a{hook}")(state, runtime)
    result = getattr(m, hook)(state, runtime)
    return await result if inspect.isawaitable(result) else result


def _call_sync(
    m: Middleware, hook: str, state: Mapping[str, object], runtime: Runtime
) -> Update | None:
    if not _own(m, hook):
        msg = f"{m.name}.{hook} is async only; run the agent with ainvoke/astream"
        raise NotImplementedError(msg)
    return getattr(m, hook)(state, runtime)


class TurnStartMiddleware(AgentMiddleware[ThreadState]):
    """The one ``before_agent`` node: every middleware's ``before_agent``, in list order."""

    state_schema = ThreadState

    def __init__(self, hooks: Sequence[Middleware], reducers: Mapping[str, Reducer]) -> None:
        super().__init__()
        self.hooks = list(hooks)
        self.reducers = reducers

    @property
    def name(self) -> str:
        return "TurnStart"

    async def abefore_agent(self, state: ThreadState, runtime: Runtime) -> Update | None:
        writes = Writes(self.reducers)
        current: Mapping[str, object] = state
        for m in self.hooks:
            update = await _call_async(m, "before_agent", current, runtime)
            if update:
                current = writes.apply(current, update)
        return writes.values or None

    def before_agent(self, state: ThreadState, runtime: Runtime) -> Update | None:
        writes = Writes(self.reducers)
        current: Mapping[str, object] = state
        for m in self.hooks:
            update = _call_sync(m, "before_agent", current, runtime)
            if update:
                current = writes.apply(current, update)
        return writes.values or None


def _with_ids(messages: list[BaseMessage]) -> list[BaseMessage]:
    for m in messages:
        if m.id is None:
            m.id = str(uuid.uuid4())
    return messages


def _merge_messages(response: list[BaseMessage], written: object) -> list[BaseMessage]:
    """A hook's ``messages`` write against the model's output: same id replaces, else
    appended (``add_messages`` semantics for the messages this step produced)."""
    out = list(response)
    msg = "a folded after_model hook must write message objects"
    if not isinstance(written, list | tuple):
        raise TypeError(msg)
    for m in cast("Sequence[object]", written):
        if not isinstance(m, BaseMessage):
            raise TypeError(msg)
        at = next((i for i, r in enumerate(out) if m.id is not None and r.id == m.id), None)
        if at is None:
            out.append(m)
        else:
            out[at] = m
    return out


def _after(
    update: Update | None,
    state: Mapping[str, object],
    messages: list[BaseMessage],
    writes: Writes,
) -> tuple[Mapping[str, object], list[BaseMessage]]:
    """An after hook's update: its messages rewrite the step's output, the rest is state."""
    if not update:
        return state, messages
    rest = dict(update)
    messages = _merge_messages(messages, rest.pop("messages", None) or [])
    return (writes.apply(state, rest) if rest else state), messages


def _ends_run(messages: Sequence[BaseMessage], has_tools: bool) -> bool:
    """The model node's output ends the run (the router's exit condition)."""
    if not has_tools:
        return True
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    return last is None or not last.tool_calls


class ModelStep(AgentMiddleware[ThreadState]):
    """The outermost ``wrap_model_call``: the folded ``before_model``, ``after_model`` and
    ``after_agent`` hooks around the model call."""

    state_schema = ThreadState

    def __init__(
        self,
        *,
        before_model: Sequence[Middleware],
        after_model: Sequence[Middleware],
        after_agent: Sequence[Middleware],
        reducers: Mapping[str, Reducer],
        has_tools: bool,
    ) -> None:
        super().__init__()
        self.before_model_hooks = list(before_model)  # list order
        self.after_model_hooks = list(reversed(after_model))  # create_agent: reverse order
        self.after_agent_hooks = list(reversed(after_agent))
        self.reducers = reducers
        self.has_tools = has_tools

    @property
    def name(self) -> str:
        return "ModelStep"

    def _result(
        self, response: ModelResponse, messages: list[BaseMessage], writes: Writes
    ) -> ModelResponse | ExtendedModelResponse:
        # messages a before_model hook wrote precede the response (the node writes once)
        pre = cast(list[BaseMessage], writes.values.pop("messages", None) or [])
        out = ModelResponse(
            result=[*pre, *messages], structured_response=response.structured_response
        )
        if not writes.values:
            return out
        return ExtendedModelResponse(model_response=out, command=Command(update=writes.values))

    def _after_state(
        self, state: Mapping[str, object], messages: list[BaseMessage]
    ) -> dict[str, object]:
        return {
            **state,
            "messages": [*cast(list[AnyMessage], state.get("messages") or []), *messages],
        }

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | ExtendedModelResponse:
        writes = Writes(self.reducers)
        state: Mapping[str, object] = request.state
        runtime = request.runtime
        for m in self.before_model_hooks:
            update = await _call_async(m, "before_model", state, runtime)
            if update:
                state = writes.apply(state, update)
        if writes.values:
            request = _refresh(request, state)
        response = await handler(request)
        messages = _with_ids(list(response.result))
        for m in self.after_model_hooks:
            update = await _call_async(
                m, "after_model", self._after_state(state, messages), runtime
            )
            state, messages = _after(update, state, messages, writes)
        if self.after_agent_hooks and _ends_run(messages, self.has_tools):
            for m in self.after_agent_hooks:
                final = self._after_state(state, messages)
                update = await _call_async(m, "after_agent", final, runtime)
                state, messages = _after(update, state, messages, writes)
        return self._result(response, messages, writes)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | ExtendedModelResponse:
        writes = Writes(self.reducers)
        state: Mapping[str, object] = request.state
        runtime = request.runtime
        for m in self.before_model_hooks:
            update = _call_sync(m, "before_model", state, runtime)
            if update:
                state = writes.apply(state, update)
        if writes.values:
            request = _refresh(request, state)
        response = handler(request)
        messages = _with_ids(list(response.result))
        for m in self.after_model_hooks:
            update = _call_sync(m, "after_model", self._after_state(state, messages), runtime)
            state, messages = _after(update, state, messages, writes)
        if self.after_agent_hooks and _ends_run(messages, self.has_tools):
            for m in self.after_agent_hooks:
                final = self._after_state(state, messages)
                update = _call_sync(m, "after_agent", final, runtime)
                state, messages = _after(update, state, messages, writes)
        return self._result(response, messages, writes)


def _refresh(request: ModelRequest, state: Mapping[str, object]) -> ModelRequest:
    """The request after ``before_model`` writes: its state, and its messages when a hook
    wrote messages (the model node builds the request from the state it was given)."""
    # The agent's state with the hooks' writes applied through its reducers.
    new_state = cast("AgentState[object]", state)
    if state.get("messages") is request.state.get("messages"):
        return request.override(state=new_state)
    messages = list(cast(list[AnyMessage], state.get("messages") or []))
    return request.override(state=new_state, messages=messages)


class _Facade(Middleware):
    """A middleware as ``create_agent`` should see it: its identity and its ``wrap_*``
    hooks (the subclasses), none of its node hooks."""

    def __init__(self, inner: Middleware) -> None:
        super().__init__()
        self.inner = inner
        self.state_schema = inner.state_schema
        self.tools = list(getattr(inner, "tools", None) or [])
        self.trace_policy = inner.trace_policy
        self.transformers = inner.transformers

    @property
    def name(self) -> str:
        return self.inner.name


class _ModelWrap(_Facade):
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage | ExtendedModelResponse:
        return self.inner.wrap_model_call(request, handler)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage | ExtendedModelResponse:
        return await self.inner.awrap_model_call(request, handler)


class _ToolWrap(_Facade):
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        return self.inner.wrap_tool_call(request, handler)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        return await self.inner.awrap_tool_call(request, handler)


class _ModelAndToolWrap(_ModelWrap, _ToolWrap):
    pass


def _facade(m: Middleware) -> Middleware:
    model = overrides(m, "wrap_model_call")
    tool = overrides(m, "wrap_tool_call")
    if model and tool:
        return _ModelAndToolWrap(m)
    if model:
        return _ModelWrap(m)
    if tool:
        return _ToolWrap(m)
    return _Facade(m)  # node hooks only: its state schema and tools still count


def fold_hooks(
    chain: Sequence[Middleware], *, has_tools: bool, state_schema: type = ThreadState
) -> list[Middleware]:
    """``chain`` with its node hooks folded into one ``TurnStart`` node and the model node
    (see the module docstring); what ``create_agent`` is given instead of ``chain``."""
    for m in chain:
        for hook in HOOKS:
            if overrides(m, hook):
                _check_no_jumps(m, hook)
    reducers = state_reducers(state_schema)
    starts = [m for m in chain if overrides(m, "before_agent")]
    step = ModelStep(
        before_model=[m for m in chain if overrides(m, "before_model")],
        after_model=[m for m in chain if overrides(m, "after_model")],
        after_agent=[m for m in chain if overrides(m, "after_agent")],
        reducers=reducers,
        has_tools=has_tools,
    )
    folded: list[Middleware] = []
    if starts:
        folded.append(TurnStartMiddleware(starts, reducers))
    if step.before_model_hooks or step.after_model_hooks or step.after_agent_hooks:
        folded.append(step)
    folded += [_facade(m) for m in chain]
    return folded
