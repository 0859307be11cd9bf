"""The sub-agent progress events, written to the run's ``custom`` stream.

Each is a dict with ``type`` and ``task_id`` (the ``task`` tool call's id, so a client can
pin the card to the call): ``task_started``, ``task_running`` (one per new sub-agent
message: a step of text or tool calls, or a tool result), then exactly one of
``task_completed | task_failed | task_cancelled | task_timed_out``. They travel through the
run's event log like every stream part, so a client that reconnects replays them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

Status = Literal["completed", "failed", "cancelled", "timed_out"]

FINAL_EVENT: dict[Status, str] = {
    "completed": "task_completed",
    "failed": "task_failed",
    "cancelled": "task_cancelled",
    "timed_out": "task_timed_out",
}

MAX_TEXT = 2000  # characters of a message's text in one task_running event
MAX_ARGS = 500  # characters of one tool call's arguments


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def message_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block.get("text"), str):
            parts.append(str(block["text"]))
    return "".join(parts)


def step_of(message: BaseMessage) -> dict[str, object] | None:
    """A compact, JSON-able view of a sub-agent message for ``task_running``."""
    if isinstance(message, AIMessage):
        calls = [
            {"name": c["name"], "args": clip(_args(c["args"]), MAX_ARGS)}
            for c in message.tool_calls
        ]
        text = message_text(message)
        if not text and not calls:
            return None
        return {"type": "ai", "content": clip(text, MAX_TEXT), "tool_calls": calls}
    if isinstance(message, ToolMessage):
        return {
            "type": "tool",
            "name": message.name or "",
            "status": message.status,
            "content": clip(message_text(message), MAX_TEXT),
        }
    return None


def _args(args: Mapping[str, object]) -> str:
    try:
        return json.dumps(args, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(args)
