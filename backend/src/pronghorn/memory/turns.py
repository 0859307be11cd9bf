"""Which messages of a conversation are worth remembering, and whose memory a run uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from pronghorn.memory.records import MemoryScope
from pronghorn.memory.updater import Turn

HIDDEN_NAMES = frozenset({"summary"})  # request-only messages the harness adds


def _text(message: BaseMessage) -> str:
    return str(message.text)


def _is_answer(message: BaseMessage) -> bool:
    """A final answer of the model (not a tool call, not the harness's error fallback)."""
    return (
        isinstance(message, AIMessage)
        and not message.tool_calls
        and "error_fallback" not in message.additional_kwargs
        and bool(_text(message))
    )


def _is_user(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and message.name not in HIDDEN_NAMES


def as_turns(messages: Sequence[BaseMessage]) -> list[Turn]:
    """User messages and final assistant answers (tool traffic and tool calls left out)."""
    out: list[Turn] = []
    for m in messages:
        if _is_user(m):
            out.append(Turn("user", _text(m), m.id))
        elif _is_answer(m):
            out.append(Turn("assistant", _text(m), m.id))
    return out


def last_exchange(messages: Sequence[BaseMessage]) -> list[Turn]:
    """The run's new user input (the last run of human messages) and the final answer after
    it; nothing when the run did not end with an answer (interrupted, failed)."""
    if not messages or not _is_answer(messages[-1]):
        return []
    i = len(messages) - 1
    while i >= 0 and not _is_user(messages[i]):
        i -= 1
    if i < 0:
        return []
    start = i
    while start > 0 and _is_user(messages[start - 1]):
        start -= 1
    return as_turns([*messages[start : i + 1], messages[-1]])


# A LangChain RunnableConfig (a TypedDict of free-form values) or a plain mapping.
def scope_of(config: Mapping[str, object] | None, agent_name: str | None) -> MemoryScope | None:
    """The memory a run reads and writes: its user (the principal it runs as) and the custom
    agent; None outside a run of a known user."""
    raw = (config or {}).get("configurable")
    configurable: Mapping[str, object] = (
        cast("Mapping[str, object]", raw) if isinstance(raw, Mapping) else {}
    )
    user = configurable.get("langgraph_auth_user_id")
    if not user:
        return None
    return MemoryScope(user_id=str(user), agent_name=agent_name or None)
