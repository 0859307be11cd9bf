"""Typed views of untyped values: run configs, resume values, message content blocks,
provider tool calls and the state's JSON objects (LangChain types them as bare ``dict`` /
``list``, or ``Any``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast


def as_mapping(value: object) -> Mapping[str, object] | None:
    """``value`` if it is a mapping (a JSON object), else None."""
    return cast("Mapping[str, object]", value) if isinstance(value, Mapping) else None


def as_list(value: object) -> list[object] | None:
    """``value`` if it is a list (a JSON array), else None."""
    return cast("list[object]", value) if isinstance(value, list) else None


def as_dict(value: object) -> dict[str, object] | None:
    """``value`` if it is a dict (a JSON object), else None."""
    return cast("dict[str, object]", value) if isinstance(value, dict) else None


def as_int(value: object) -> int:
    """``value`` as a whole number if it is a JSON number (a float is truncated), else 0."""
    return int(value) if isinstance(value, int | float) else 0
