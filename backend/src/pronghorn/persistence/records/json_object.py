"""The type every record gives its JSON columns."""

from __future__ import annotations

from collections.abc import Mapping

JsonObject = Mapping[str, object]
"""A JSON object as a JSON column gives it back (the decoded dict, not copied)."""


def json_object(value: object) -> JsonObject | None:
    """A JSON column's value as an object, None when it holds no object (NULL, a list...)."""
    if isinstance(value, Mapping):
        return value  # pyright: ignore[reportUnknownVariableType]  # a JSON column's object
    return None
