"""Up-front check of ``input.messages``: a malformed message is a 400, not a failed run.

For graphs whose ``messages`` state key is reduced by LangGraph's ``add_messages`` (the lead
agent, ``MessagesState`` graphs, ``create_agent`` graphs), each item of ``input.messages``
must be what ``add_messages`` accepts: a LangChain message, a string, a ``(role, content)``
pair, or a dict with ``role``/``type`` and ``content`` (what the SDKs send:
``{"role": "user", "content": "..."}`` or ``{"type": "human", ...}``). The check is
LangChain's own coercion (``convert_to_messages``), so it accepts exactly what the graph
would, never a stricter format. Other graphs (and factories other than the lead agent,
which cannot be inspected without building them) are not checked here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.messages import convert_to_messages
from langgraph.channels.binop import BinaryOperatorAggregate  # pyright: ignore[reportMissingTypeStubs]  # a langgraph subpackage without py.typed
from langgraph.graph.message import add_messages  # pyright: ignore[reportMissingTypeStubs]  # a langgraph subpackage without py.typed
from pydantic import ValidationError

from pronghorn.graphs.registry import GraphRegistry, builtin_spec
from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.errors import InvalidRun

MESSAGE_GRAPH_SPECS = frozenset({builtin_spec("lead_agent")})


class InvalidRunInput(InvalidRun, ValueError):
    """The run's input cannot be given to its graph (the gateway answers 400)."""


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]!r}" if exc.args else "a required key is missing"
    if isinstance(exc, ValidationError):
        parts: list[str] = []
        for err in exc.errors()[:2]:
            loc = ".".join(str(p) for p in err.get("loc", ()))
            parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
        return "; ".join(parts)
    text = str(exc).split("\n", 1)[0].strip()
    return text or type(exc).__name__


def message_problem(item: object) -> str | None:
    """Why LangChain cannot turn ``item`` into a message; None when it can."""
    # Any: a client's value, given to LangChain's coercion to learn whether it is a message
    candidate: Any = item
    try:
        convert_to_messages([candidate])
    except Exception as exc:  # whatever LangChain raises, the item is not a message
        return _reason(exc)
    return None


def check_input_messages(value: object) -> None:
    """Raise :class:`InvalidRunInput` naming ``input.messages[i]`` for the first bad item."""
    if not isinstance(value, dict):
        return
    fields = cast("dict[str, object]", value)  # a run's JSON input: its keys are strings
    if "messages" not in fields:
        return
    messages = fields["messages"]
    if messages is None:
        raise InvalidRunInput("input.messages: expected a message or a list of messages, not null")
    if not isinstance(messages, list):
        problem = message_problem(messages)
        if problem is not None:
            raise InvalidRunInput(f"input.messages: not a valid message: {problem}")
        return
    for i, item in enumerate(cast("list[object]", messages)):
        problem = message_problem(item)
        if problem is not None:
            raise InvalidRunInput(f"input.messages[{i}]: not a valid message: {problem}")


def takes_messages(graphs: GraphRegistry, graph_id: str) -> bool:
    """Does this graph reduce ``messages`` with ``add_messages``?"""
    try:
        entry = graphs.entry(graph_id)
    except KeyError:
        return False
    if entry.is_factory:
        return entry.spec in MESSAGE_GRAPH_SPECS
    channel = entry.target.channels.get("messages")
    if not isinstance(channel, BinaryOperatorAggregate):
        return False
    return cast("BinaryOperatorAggregate[object]", channel).operator is add_messages


def message_input_validator(
    graphs: GraphRegistry,
) -> Callable[[RunCreate, AssistantRecord], None]:
    """A RunManager validator (runs before the run is written), raising InvalidRunInput."""

    def validate(req: RunCreate, assistant: AssistantRecord) -> None:
        if req.input is None or not takes_messages(graphs, assistant.graph_id):
            return
        check_input_messages(req.input)

    return validate
