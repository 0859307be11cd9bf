"""Field types shared by request bodies: bounded integers, TTLs, checkpoints and filters.

Every number a client sends ends up in SQL (`OFFSET`, `LIMIT`), a `timedelta` or a LangGraph
config, so each is bounded here, once: out-of-range values fail validation (422) instead of
overflowing deep inside a query after part of the work is done.
"""

from __future__ import annotations

import re
from typing import Annotated, cast

from pydantic import AfterValidator, Field

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# A TTL (minutes) long enough for any real use, short enough that `now + ttl` is a date.
MAX_TTL_MINUTES = 100 * 365 * 24 * 60

Offset = Annotated[int, Field(ge=0, le=INT64_MAX)]
"""A pagination offset: 0 ≤ offset < 2⁶³ (SQLite and PostgreSQL take a signed 64-bit one)."""

TTLMinutes = Annotated[float, Field(gt=0, le=MAX_TTL_MINUTES)]
"""A time-to-live in minutes: positive, at most 100 years."""


def _check_checkpoint(value: dict[str, object]) -> dict[str, object]:
    inner = value.get("configurable")
    # a JSON object's keys are strings
    sources = (value, cast("dict[str, object]", inner)) if isinstance(inner, dict) else (value,)
    for source in sources:
        for key in ("checkpoint_id", "checkpoint_ns"):
            if source.get(key) is not None and not isinstance(source[key], str):
                raise ValueError(f"{key} must be a string")
        if source.get("checkpoint_map") is not None and not isinstance(
            source["checkpoint_map"], dict
        ):
            raise ValueError("checkpoint_map must be an object")
    return value


CheckpointDict = Annotated[dict[str, object], AfterValidator(_check_checkpoint)]
"""A checkpoint selector (`{checkpoint_id, checkpoint_ns, checkpoint_map, ...}`): other keys
(the SDKs echo `thread_id` back) are left for the caller to ignore; the three LangGraph
reads must have the types it expects (also inside a `configurable` wrapper)."""

FILTER_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")
"""What a JSON-filter key may be: LangGraph's stores and checkpointers put it in SQL text."""


def _check_filter_keys(value: dict[str, object]) -> dict[str, object]:
    for key in value:
        if not FILTER_KEY.match(key):
            raise ValueError(
                f"invalid filter key {key!r}: use letters, digits, '_', '-' and '.' only"
            )
    return value


FilterDict = Annotated[dict[str, object], AfterValidator(_check_filter_keys)]
"""A `{key: value}` filter passed to a LangGraph store or checkpointer search."""
