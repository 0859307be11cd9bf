"""Bounded line reading: line numbers, heads capped per line, skipping, deadline."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pronghorn.sandbox.lines import CHUNK_BYTES, ScanDeadline, iter_lines


def lines_of(path: Path, **kw: object) -> list[tuple[int, bytes, bool]]:
    fd = os.open(path, os.O_RDONLY)
    try:
        return list(iter_lines(fd, **kw))  # type: ignore[arg-type]
    finally:
        os.close(fd)


def test_lines_heads_and_cuts(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_bytes(b"one\n" + b"x" * (3 * CHUNK_BYTES) + b"\nlast")
    assert lines_of(f, max_line_bytes=10) == [
        (1, b"one\n", False),
        (2, b"x" * 10, True),
        (3, b"last", False),
    ]
    assert lines_of(f, max_line_bytes=10, first=3) == [(3, b"last", False)]
    assert lines_of(f, max_line_bytes=4, first=1)[0] == (1, b"one\n", False)
    f.write_bytes(b"")
    assert lines_of(f, max_line_bytes=10) == []
    f.write_bytes(b"a\n\nb\n")
    assert [n for n, _, _ in lines_of(f, max_line_bytes=10)] == [1, 2, 3]


def test_deadline(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_bytes(b"a\n" * 10)
    with pytest.raises(ScanDeadline):
        lines_of(f, max_line_bytes=10, deadline=time.monotonic() - 1)


def test_skipping_many_short_lines_is_fast(tmp_path: Path) -> None:
    f = tmp_path / "many.txt"
    f.write_bytes(b"x\n" * 2_000_000 + b"target\n")
    started = time.monotonic()
    assert lines_of(f, max_line_bytes=10, first=2_000_001) == [(2_000_001, b"target\n", False)]
    assert time.monotonic() - started < 10
    assert lines_of(f, max_line_bytes=10, first=1_999_999)[0] == (1_999_999, b"x\n", False)
