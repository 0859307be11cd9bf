"""What a call's run says: the answer's tokens in its events, the answer, the interrupts it
stopped on, its error — read from the run's events and output as the API serializes them."""

from __future__ import annotations

from typing import Any, cast

import orjson

from pronghorn.runtime.events.broker import Event
from pronghorn.runtime.events.serialization import to_jsonable


def text_of(content: Any) -> str:
    """The text of a message's content (a string, or a list of content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in cast(list[Any], content):
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                b = cast(dict[str, Any], block)
                if b.get("type") == "text" and isinstance(b.get("text"), str):
                    parts.append(str(b["text"]))
        return "".join(parts)
    return ""


def token_of(event: Event) -> str | None:
    """The answer text an event carries: an AI message chunk of the root graph
    (`messages-tuple` mode); None for anything else (tool calls, sub-graphs, other modes)."""
    if event.event != "messages":
        return None
    data = to_jsonable_bytes(event.data)
    if not isinstance(data, list) or not data:
        return None
    message = cast(list[Any], data)[0]
    if not isinstance(message, dict):
        return None
    msg = cast(dict[str, Any], message)
    if msg.get("type") not in ("AIMessageChunk", "ai"):
        return None
    return text_of(msg.get("content")) or None


def to_jsonable_bytes(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def last_answer(values: Any) -> str:
    """The text of the last AI message in a run's output values ('' if none)."""
    if not isinstance(values, dict):
        return ""
    messages = cast(dict[str, Any], values).get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(cast(list[Any], messages)):
        raw = to_jsonable(message)
        if not isinstance(raw, dict):
            continue
        msg = cast(dict[str, Any], raw)
        if msg.get("type") in ("ai", "AIMessageChunk"):
            return text_of(msg.get("content"))
    return ""


def interrupts_of(output: Any) -> list[Any]:
    """The interrupt values a finished run stopped on (empty: it did not stop on one)."""
    if not isinstance(output, dict):
        return []
    found = cast(dict[str, Any], output).get("__interrupt__")
    if not isinstance(found, list):
        return []
    out: list[Any] = []
    for item in cast(list[Any], found):
        value = to_jsonable(item)
        if isinstance(value, dict) and "value" in value:
            out.append(cast(dict[str, Any], value)["value"])
        else:
            out.append(value)
    return out


def error_of(output: Any) -> str | None:
    if isinstance(output, dict) and "__error__" in output:
        err = cast(dict[str, Any], output)["__error__"]
        if isinstance(err, dict):
            e = cast(dict[str, Any], err)
            return f"{e.get('error', 'Error')}: {e.get('message', '')}"
        return str(err)
    return None
