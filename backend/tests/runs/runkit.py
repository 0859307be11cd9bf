"""Helpers for run-engine tests: inputs for the echo graph and raw SSE reading over httpx."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx


def human(text: str) -> dict:
    """Input for the echo graph: one user message."""
    return {"messages": [{"role": "user", "content": text}]}


FINAL = frozenset({"success", "error", "interrupted", "timeout"})


async def wait_status(
    client: Any, tid: str, rid: str, wanted: set[str], within: float = 60.0
) -> dict[str, Any]:
    """A run (through an SDK client) once its status is one of ``wanted``, waited for on the
    run's own events: final statuses once ``runs.join`` returns (the run has ended); any
    other (``running``) at the first event of the run's replayed stream that shows it."""
    async with asyncio.timeout(within):
        if wanted <= FINAL:
            await client.runs.join(tid, rid)
        else:
            async for _ in client.runs.join_stream(tid, rid, last_event_id="0"):
                run = await client.runs.get(tid, rid)
                if run["status"] in wanted:
                    return run
    run = await client.runs.get(tid, rid)
    if run["status"] not in wanted:
        raise AssertionError(f"run {rid} is {run['status']}, wanted {wanted}")
    return run


async def wait_next(
    client: Any, tid: str, nodes: list[str], within: float = 60.0
) -> dict[str, Any]:
    """Poll a thread's state (through an SDK client) until its checkpoint's ``next`` is
    ``nodes``: a step has been checkpointed (e.g. the echo graph's ``prepare``)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        state = await client.threads.get_state(tid)
        if state["next"] == nodes:
            return state
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"thread {tid} next stayed {state['next']}, wanted {nodes}")
        await asyncio.sleep(0.05)


@dataclass
class Frame:
    event: str | None
    data: str | None
    id: str | None


def frame_id(frame: Frame) -> int:
    """The frame's id as a number (a frame the test numbers must have one)."""
    assert frame.id is not None, frame
    return int(frame.id)


def parse_frames(raw: bytes) -> list[Frame | str]:
    """Frames and comments (as strings) in order; the server uses CRLF."""
    out: list[Frame | str] = []
    for block in raw.decode().split("\r\n\r\n"):
        if not block:
            continue
        lines = block.split("\r\n")
        if all(line.startswith(":") for line in lines):
            out.extend(lines)
            continue
        fields = {}
        for line in lines:
            name, _, value = line.partition(": ")
            fields[name] = value
        out.append(Frame(fields.get("event"), fields.get("data"), fields.get("id")))
    return out


def read_events(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    limit: int | None = None,
    headers: dict | None = None,
    **kwargs,
) -> tuple[httpx.Response, list[Frame]]:
    """Read SSE frames; stop (dropping the connection) after `limit` frames."""
    frames: list[Frame] = []
    buf = b""
    with client.stream(method, url, headers=headers, **kwargs) as resp:
        for chunk in resp.iter_raw():
            buf += chunk
            while b"\r\n\r\n" in buf:
                block, buf = buf.split(b"\r\n\r\n", 1)
                for item in parse_frames(block + b"\r\n\r\n"):
                    if isinstance(item, Frame):
                        frames.append(item)
                if limit is not None and len(frames) >= limit:
                    return resp, frames
    return resp, frames
