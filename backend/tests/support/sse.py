"""Parse a whole Server-Sent Events body, as a test reads a finished stream."""

from __future__ import annotations

import json
from typing import Any


def sse_events(text: str) -> list[tuple[str, Any]]:
    """The (event, JSON data) pairs of an SSE body, in order; data lines join per frame."""
    out: list[tuple[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event, data = "", ""
        for line in block.splitlines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        if event:
            out.append((event, json.loads(data) if data else None))
    return out
