"""Helpers shared by the repositories."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from sqlalchemy import ColumnElement, Table, and_, true


@dataclass(frozen=True, slots=True)
class OwnerScope:
    """What a search may return: rows of `owner_id` (None: any owner) whose metadata match
    the authorizer's `filter` (persistence/metadata_filter.py)."""

    owner_id: str | None = None
    filter: Mapping[str, object] | None = None


ANY_OWNER = OwnerScope()


def now() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    """UUIDv7 when available (time-ordered, like the reference server), else v4."""
    maker = getattr(uuid, "uuid7", None)
    if maker is not None:
        return str(maker())
    return str(_uuid7())


def _uuid7() -> uuid.UUID:
    import os
    import time

    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return uuid.UUID(int=value)


def as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:  # SQLite returns naive datetimes
        return value.replace(tzinfo=UTC)
    return value


def iso(value: datetime | None) -> str | None:
    value = as_utc(value)
    return value.isoformat() if value else None


def json_filter(
    table: Table, column: str, filt: Mapping[str, object] | None
) -> tuple[ColumnElement[bool], dict[str, object]]:
    """SQL conditions for scalar keys of a JSON-containment filter; the rest is returned so the
    caller can check it in Python (nested objects and lists)."""
    if not filt:
        return true(), {}
    col = table.c[column]
    conds: list[ColumnElement[bool]] = []
    rest: dict[str, object] = {}
    for key, value in filt.items():
        if isinstance(value, bool):
            conds.append(col[key].as_boolean() == value)
        elif isinstance(value, int):
            conds.append(col[key].as_integer() == value)
        elif isinstance(value, float):
            conds.append(col[key].as_float() == value)
        elif isinstance(value, str):
            conds.append(col[key].as_string() == value)
        else:
            rest[key] = value
    return (and_(*conds) if conds else true()), rest


def contains(container: object, subset: object) -> bool:
    """JSON containment (`@>`): every key/value of subset is in container."""
    if isinstance(subset, dict):
        if not isinstance(container, dict):
            return False
        sub_map = cast("dict[object, object]", subset)  # a JSON object
        in_map = cast("dict[object, object]", container)
        return all(k in in_map and contains(in_map[k], v) for k, v in sub_map.items())
    if isinstance(subset, list):
        if not isinstance(container, list):
            return False
        sub_list = cast("list[object]", subset)  # a JSON array
        in_list = cast("list[object]", container)
        return all(any(contains(c, s) for c in in_list) for s in sub_list)
    return container == subset
