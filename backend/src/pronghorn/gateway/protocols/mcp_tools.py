"""What an assistant looks like as an MCP tool: its name, its input and output schemas, and
reading a call's arguments.

Every tool takes `question` (the user message) and an optional `thread_id`. A graph whose
input has fields besides `messages` also gets them, under an optional `input` object,
copied from the graph's own input schema (built-in graphs such as the lead agent do not:
their other state channels are the harness's, not the caller's).
"""

from __future__ import annotations

import copy
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pronghorn.agent.untyped import as_dict
from pronghorn.runtime.services.agent_calls import Callee

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")

BASE_PROPERTIES: dict[str, object] = {
    "question": {"type": "string", "minLength": 1, "description": "What to ask."},
    "thread_id": {
        "type": "string",
        "description": "Continue this conversation (a thread_id an earlier answer gave); "
        "omit it to start a new one.",
    },
}
OUTPUT_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "thread_id": {"type": "string"},
        "run_id": {"type": "string"},
        "status": {"type": "string", "enum": ["completed", "input_required"]},
    },
    "required": ["answer", "thread_id", "run_id", "status"],
}


class BadCall(Exception):
    """A tool call that cannot run (bad arguments, a refused run): an isError result."""


def tool_names(callees: Iterable[Callee]) -> dict[str, Callee]:
    """A valid, unique MCP tool name per callee (its name; a clash adds the id's start)."""
    out: dict[str, Callee] = {}
    for callee in callees:
        base = _UNSAFE.sub("_", callee.name).strip("_")[:48] or "assistant"
        name = base if base not in out else f"{base}_{callee.assistant_id[:8]}"
        out[name] = callee
    return out


def input_schema(callee: Callee, builtin: bool) -> dict[str, object]:
    properties = dict(BASE_PROPERTIES)
    schema: dict[str, object] = {
        "type": "object",
        "properties": properties,
        "required": ["question"],
        "additionalProperties": False,
    }
    graph = callee.input_schema or {}
    props = as_dict(graph.get("properties")) or {}
    extra = {k: v for k, v in props.items() if k != "messages"}
    if builtin or not extra:
        return schema
    properties["input"] = {
        "type": "object",
        "description": "More fields of the assistant's input (its graph's input schema).",
        "properties": copy.deepcopy(extra),
        "additionalProperties": False,
    }
    for key in ("$defs", "definitions"):  # what the copied properties may $ref
        if key in graph:
            schema[key] = copy.deepcopy(graph[key])
    return schema


@dataclass(frozen=True, slots=True)
class ToolCall:
    question: str
    thread_id: str | None
    extra: dict[str, object] = field(default_factory=lambda: {})


def parse_arguments(arguments: Mapping[str, object], schema: Mapping[str, object]) -> ToolCall:
    properties = as_dict(schema["properties"]) or {}  # input_schema's: always an object
    question = arguments.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BadCall("'question' is required: a non-empty string")
    unknown = set(arguments) - set(properties)
    if unknown:
        raise BadCall(f"Unknown argument(s): {', '.join(sorted(unknown))}")
    extra = as_dict(arguments.get("input") or {})
    if extra is None:
        raise BadCall("'input' must be an object")
    allowed = as_dict((as_dict(properties.get("input")) or {}).get("properties")) or {}
    unknown_input = set(extra) - set(allowed)
    if unknown_input:
        raise BadCall(f"Unknown input field(s): {', '.join(sorted(unknown_input))}")
    thread_id = arguments.get("thread_id")
    if thread_id is None or thread_id == "":
        return ToolCall(question, None, extra)
    try:
        return ToolCall(question, str(uuid.UUID(str(thread_id))), extra)
    except ValueError:
        raise BadCall("'thread_id' must be a thread UUID from an earlier answer") from None
