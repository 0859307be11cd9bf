"""A gate the test graphs' nodes wait at: a file the test creates when the node may go on
(an event the test controls, instead of a sleep that is too short or too long)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

GATE_TIMEOUT_S = 300.0  # a gate no test opens fails the run instead of holding it forever


async def wait_for_gate(path: str | Path, poll_s: float = 0.02) -> None:
    gate = Path(path)
    deadline = time.monotonic() + GATE_TIMEOUT_S
    while not await asyncio.to_thread(gate.exists):
        if time.monotonic() > deadline:
            raise TimeoutError(f"gate {gate} was never opened")
        await asyncio.sleep(poll_s)
