"""Whether values are small enough to serialize on the event loop.

LangGraph's PostgreSQL saver serializes every checkpoint's blobs and every task's writes in
a worker thread (`asyncio.to_thread`), so a large state never blocks the loop. For the small
values most writes carry (a step's message, a counter) the thread hop costs more CPU than
the serialization: the executor's queue, a thread woken, the GIL handed over and back, the
loop woken by the result. `small` looks at a bounded number of a value's parts and says
yes only when it has seen all of them and they hold few bytes; anything it does not know
(an arbitrary object) or cannot finish looking at counts as large, and goes to the thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from pydantic import BaseModel

MAX_PARTS = 256
"""Parts (containers, scalars, model fields) looked at before a value counts as large."""
MAX_BYTES = 16 * 1024
"""Characters and bytes of strings held, at most, by values that count as small."""

_SCALARS = (int, float, bool, type(None))


def small(
    values: Iterable[object], *, max_parts: int = MAX_PARTS, max_bytes: int = MAX_BYTES
) -> bool:
    """Whether all of `values` together are within `max_parts` parts and `max_bytes` bytes of
    strings, made only of JSON-like containers, scalars, strings, bytes and pydantic models
    (LangChain's messages are)."""
    stack: list[object] = list(values)
    parts = 0
    size = 0
    while stack:
        value = stack.pop()
        parts += 1
        if parts > max_parts:
            return False
        if isinstance(value, (str, bytes)):
            size += len(value)
            if size > max_bytes:
                return False
        elif isinstance(value, _SCALARS):
            continue
        elif isinstance(value, Mapping):
            items = cast("Mapping[object, object]", value)
            if len(items) > max_parts:
                return False
            stack.extend(items.keys())
            stack.extend(items.values())
        elif isinstance(value, (list, tuple)):
            seq = cast("list[object] | tuple[object, ...]", value)
            if len(seq) > max_parts:
                return False
            stack.extend(seq)
        elif isinstance(value, BaseModel):
            fields = cast("dict[str, object]", vars(value))
            stack.extend(fields.values())
            extra = value.__pydantic_extra__
            if extra:
                stack.extend(cast("dict[str, object]", extra).values())
        else:
            return False
    return True
