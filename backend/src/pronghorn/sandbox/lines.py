"""Read lines from a descriptor with bounded memory.

A file can hold one 300 MB line; iterating a text file object would build that whole line
in memory (and more while decoding). :func:`iter_lines` reads fixed-size chunks and keeps
at most ``max_line_bytes`` of each line, so memory stays bounded by the chunk size plus
that cap whatever the file holds. Lines before ``first`` are only counted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

CHUNK_BYTES = 64 * 1024


class ScanDeadline(Exception):
    """The scan ran past its deadline (``time.monotonic()`` value)."""


def iter_lines(
    fd: int,
    *,
    max_line_bytes: int,
    first: int = 1,
    deadline: float | None = None,
) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(line_number, head, cut)`` for each line from the descriptor's offset.

    ``head`` is the line's first ``max_line_bytes`` bytes including its ``\\n`` (when it
    fits); ``cut`` says the line was longer. Raises :class:`ScanDeadline` when
    ``deadline`` passes (checked once per chunk).
    """
    lineno = 1
    buf = bytearray()
    cut = False
    pending = False
    while True:
        if deadline is not None and time.monotonic() > deadline:
            raise ScanDeadline
        chunk = os.read(fd, CHUNK_BYTES)
        if not chunk:
            break
        pos = 0
        end = len(chunk)
        while pos < end:
            if lineno < first:
                skipped = chunk.count(b"\n", pos)
                if lineno + skipped < first:  # the whole rest of the chunk is before first
                    lineno += skipped
                    break
                nl = chunk.find(b"\n", pos)
                if nl < 0:
                    break
                lineno += 1
                pos = nl + 1
                continue
            nl = chunk.find(b"\n", pos)
            stop = end if nl < 0 else nl + 1
            room = max_line_bytes - len(buf)
            if room > 0:
                buf += chunk[pos : min(stop, pos + room)]
            if stop - pos > max(room, 0):
                cut = True
            pending = True
            if nl < 0:
                break
            yield lineno, bytes(buf), cut
            buf.clear()
            cut = pending = False
            lineno += 1
            pos = stop
    if pending:
        yield lineno, bytes(buf), cut
