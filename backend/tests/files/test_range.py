"""Range header parsing for served descriptors (RFC 9110 single byte ranges)."""

from __future__ import annotations

import pytest

from pronghorn.gateway.descriptor_response import parse_range


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("bytes=0-0", (0, 0)),
        ("bytes=2-7", (2, 7)),
        ("bytes=5-", (5, 9)),
        ("bytes=-3", (7, 9)),
        ("bytes=-30", (0, 9)),
        ("bytes=8-100", (8, 9)),
        ("BYTES = 1-2", (1, 2)),
        ("bytes=10-", "unsatisfiable"),
        ("bytes=-0", "unsatisfiable"),
        ("bytes=3-1", None),
        ("bytes=0-1,3-4", None),
        ("bytes=a-b", None),
        ("items=0-1", None),
        ("bytes=", None),
        ("bytes=-", None),
        ("bytes=1", None),
    ],
)
def test_parse_range(header: str | None, expected: object) -> None:
    assert parse_range(header, 10) == expected


def test_empty_file() -> None:
    assert parse_range("bytes=0-", 0) == "unsatisfiable"
    assert parse_range("bytes=-1", 0) == "unsatisfiable"
