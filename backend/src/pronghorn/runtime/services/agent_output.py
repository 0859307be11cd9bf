"""What a call's run says: the answer's tokens in its events, the answer, the interrupts it
stopped on, its error — read from the run's events and output as the API serializes them."""

from __future__ import annotations

import orjson

from pronghorn.agent.untyped import as_dict, as_list
from pronghorn.runtime.events.broker import Event
from pronghorn.runtime.events.serialization import to_jsonable


def text_of(content: object) -> str:
    """The text of a message's content (a string, or a list of content blocks)."""
    if isinstance(content, str):
        return content
    blocks = as_list(content)
    if blocks is None:
        return ""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            parts.append(block)
            continue
        b = as_dict(block)
        if b is not None and b.get("type") == "text" and isinstance(b.get("text"), str):
            parts.append(str(b["text"]))
    return "".join(parts)


def token_of(event: Event) -> str | None:
    """The answer text an event carries: an AI message chunk of the root graph
    (`messages-tuple` mode); None for anything else (tool calls, sub-graphs, other modes)."""
    if event.event != "messages":
        return None
    data = as_list(to_jsonable_bytes(event.data))
    if not data:
        return None
    msg = as_dict(data[0])
    if msg is None or msg.get("type") not in ("AIMessageChunk", "ai"):
        return None
    return text_of(msg.get("content")) or None


def to_jsonable_bytes(data: bytes) -> object:
    """An event's JSON data, decoded (None when it is not JSON)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def last_answer(values: object) -> str:
    """The text of the last AI message in a run's output values ('' if none)."""
    found = as_dict(values)
    messages = as_list(found.get("messages")) if found is not None else None
    if messages is None:
        return ""
    for message in reversed(messages):
        msg = as_dict(to_jsonable(message))
        if msg is not None and msg.get("type") in ("ai", "AIMessageChunk"):
            return text_of(msg.get("content"))
    return ""


def interrupts_of(output: object) -> list[object]:
    """The interrupt values a finished run stopped on (empty: it did not stop on one)."""
    found = as_dict(output)
    items = as_list(found.get("__interrupt__")) if found is not None else None
    if items is None:
        return []
    out: list[object] = []
    for item in items:
        value: object = to_jsonable(item)
        interrupt = as_dict(value)
        out.append(interrupt["value"] if interrupt is not None and "value" in interrupt else value)
    return out


def error_of(output: object) -> str | None:
    """The error a run's output carries (`__error__`), as text; None when it has none."""
    found = as_dict(output)
    if found is None or "__error__" not in found:
        return None
    err = found["__error__"]
    e = as_dict(err)
    if e is not None:
        return f"{e.get('error', 'Error')}: {e.get('message', '')}"
    return str(err)
