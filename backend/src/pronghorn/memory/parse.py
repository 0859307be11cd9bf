"""Tolerant JSON from a model: code fences, prose around the object, trailing commas,
comments, Python literals and smart quotes are all forgiven; anything else is None."""

from __future__ import annotations

import json
import re
from typing import cast

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_LINE_COMMENT = re.compile(r"(?m)^\s*//.*$|(?<=[,{\[])\s*//[^\n]*")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def _objects(text: str) -> list[str]:
    """Every balanced top-level ``{...}`` span of ``text`` (strings respected)."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_string = False
    escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    if depth and start >= 0:  # cut off: close what is open
        spans.append(text[start:] + "}" * depth)
    return spans


def _repair(text: str) -> str:
    text = _LINE_COMMENT.sub("", text)
    text = _TRAILING_COMMA.sub(r"\1", text)
    return re.sub(r"\b(True|False|None)\b", lambda m: _PY_LITERALS[m.group(1)], text)


def _load(text: str) -> dict[str, object] | None:
    for candidate in (text, _repair(text)):
        try:
            value: object = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return cast("dict[str, object]", value)
    return None


def parse_json_object(text: str) -> dict[str, object] | None:
    """The first JSON object in a model's reply, repaired if it can be; None if none."""
    for variant in (text.strip(), text.translate(_SMART).strip()):
        candidates = [m.group(1).strip() for m in _FENCE.finditer(variant)]
        candidates.append(variant)
        for candidate in candidates:
            found = _load(candidate)
            if found is not None:
                return found
            for span in _objects(candidate):
                found = _load(span)
                if found is not None:
                    return found
    return None
