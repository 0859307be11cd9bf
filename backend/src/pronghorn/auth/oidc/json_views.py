"""Typed views of JSON values from the issuer (objects, lists, strings)."""

from __future__ import annotations

from typing import cast

JsonObject = dict[str, object]


def as_object(value: object) -> JsonObject | None:
    """`value` as a JSON object with string keys, or None when it is not an object."""
    if not isinstance(value, dict):
        return None
    items = cast("dict[object, object]", value).items()
    return {str(k): v for k, v in items}


def as_list(value: object) -> list[object] | None:
    return list(cast("list[object]", value)) if isinstance(value, list) else None


def strings_in(value: object) -> tuple[str, ...]:
    """The strings of a JSON list (a lone string counts as a list of one)."""
    if isinstance(value, str):
        return (value,)
    return tuple(v for v in as_list(value) or () if isinstance(v, str))
