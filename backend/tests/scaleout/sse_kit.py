"""Reading SSE bytes from a replica: the frames of a stream, byte for byte, with a hook
that runs after the first frames (to let a gated run go on)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

RUN_DONE = {"running", "pending"}


def frames_of(
    client: httpx.Client,
    url: str,
    *,
    last_event_id: str | None = None,
    after: int | None = None,
    then: Callable[[], object] | None = None,
    until: Callable[[list[bytes]], bool] | None = None,
) -> tuple[int, list[bytes]]:
    """(status, the raw event blocks without heartbeats); `then()` runs once `after` frames
    have arrived; the stream is left as soon as `until(blocks)` holds."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id is not None else {}
    blocks: list[bytes] = []
    buf = b""
    with client.stream("GET", url, headers=headers) as resp:
        if resp.status_code != 200:
            resp.read()
            return resp.status_code, [resp.content]
        for chunk in resp.iter_raw():
            buf += chunk
            while b"\r\n\r\n" in buf:
                block, buf = buf.split(b"\r\n\r\n", 1)
                if block.startswith(b":"):
                    continue
                blocks.append(block)
                if then is not None and after is not None and len(blocks) == after:
                    then()
                if until is not None and until(blocks):
                    return 200, blocks
    return 200, blocks


def follow_thread(
    client: httpx.Client, tid: str, runs: int = 1, last_event_id: str = "-"
) -> list[bytes]:
    """The thread stream's event blocks (from `last_event_id`; `-`: the thread log's start)
    until `runs` runs have ended (their run_done)."""

    def ended(blocks: list[bytes]) -> bool:
        return b'"run_done"' in blocks[-1] and sum(b'"run_done"' in b for b in blocks) == runs

    url = f"/api/langgraph/threads/{tid}/stream"
    status, blocks = frames_of(client, url, last_event_id=last_event_id, until=ended)
    assert status == 200, blocks
    return blocks


def event_id(block: bytes) -> int | None:
    for line in block.split(b"\r\n"):
        if line.startswith(b"id: "):
            return int(line[4:])
    return None


def chatty(gate: Path, events: int = 3, after_gate: int = 3) -> dict[str, Any]:
    return {"events": events, "size": 20, "gate": str(gate), "after_gate": after_gate}


def wait_status(client: httpx.Client, tid: str, rid: str, wanted: set[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while True:
        run = client.get(f"/api/langgraph/threads/{tid}/runs/{rid}").json()
        if run["status"] in wanted:
            return run
        assert time.monotonic() < deadline, f"run stayed {run['status']}"
        time.sleep(0.05)
