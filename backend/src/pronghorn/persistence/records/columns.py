"""A database row's columns read as the records' types (a row's values are `object`)."""

from __future__ import annotations

from datetime import datetime


def text_or_none(value: object) -> str | None:
    """A nullable text column."""
    return None if value is None else str(value)


def whole(value: object) -> int:
    """An integer column (0 when NULL)."""
    return int(value) if isinstance(value, int | float | str) else 0


def timestamp(value: object) -> datetime:
    """A NOT NULL timestamp column."""
    if not isinstance(value, datetime):
        raise TypeError(f"a timestamp was expected, not {value!r}")
    return value


def timestamp_or_none(value: object) -> datetime | None:
    """A nullable timestamp column."""
    return value if isinstance(value, datetime) else None
