"""SSE framing (gateway/sse.py): the bytes of a frame, heartbeats, Last-Event-ID parsing, and
a round trip through the official SDK's own SSE decoder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, MutableMapping
from typing import Any

import pytest
from langgraph_sdk.sse import BytesLineDecoder, SSEDecoder

from pronghorn.gateway.sse import filter_modes, frame, mode_of, parse_last_event_id, sse_response
from pronghorn.runtime.events.broker import Event


def test_frame_is_event_data_id_with_crlf() -> None:
    ev = Event(7, "values", b'{"a":1}')
    assert frame(ev) == b'event: values\r\ndata: {"a":1}\r\nid: 7\r\n\r\n'


def test_the_sdk_decodes_our_frames() -> None:
    events = [
        Event(1, "metadata", b'{"run_id":"r","attempt":1}'),
        Event(2, "messages/partial|sub:1", b'[{"content":"a\\nb"}]'),  # escaped newline
        Event(3, "end", b"null"),
    ]
    wire = b"".join(frame(ev) for ev in events)
    lines = BytesLineDecoder()
    sse = SSEDecoder()
    parts = []
    for chunk in (wire[:5], wire[5:40], wire[40:]):  # split anywhere, as TCP does
        for line in lines.decode(chunk):
            part = sse.decode(bytes(line).rstrip(b"\n"))
            if part is not None:
                parts.append(part)
    assert [p.event for p in parts] == ["metadata", "messages/partial|sub:1", "end"]
    assert parts[0].data == {"run_id": "r", "attempt": 1}
    assert parts[1].data == [{"content": "a\nb"}]
    assert parts[2].data is None
    assert sse.last_event_id == "3"


@pytest.mark.parametrize(
    ("value", "thread", "want"),
    [
        (None, False, None),
        ("", False, None),
        ("-1", False, 0),
        ("0", False, 0),
        ("-", True, 0),
        ("0-0", True, 0),
        (" 42 ", False, 42),
        (str(2**63 - 1), False, 2**63 - 1),
    ],
)
def test_last_event_id_values(value: str | None, thread: bool, want: int | None) -> None:
    assert parse_last_event_id(value, thread=thread) == want


@pytest.mark.parametrize("value", ["x-y", "1.5", "-2", str(2**63), "0-0"])
def test_bad_last_event_ids_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="Invalid Last-Event-ID"):
        parse_last_event_id(value)  # "0-0" is a thread-stream form only


def test_modes_of_event_names() -> None:
    assert mode_of("messages/partial|a:1") == "messages"
    assert mode_of("messages") == "messages-tuple"
    assert mode_of("updates|inner:2") == "updates"


async def _events(items: list[Event]) -> AsyncGenerator[Event, None]:
    for ev in items:
        yield ev


async def test_filter_keeps_wanted_modes_and_the_control_events() -> None:
    items = [
        Event(1, "metadata", b"{}"),
        Event(2, "values", b"{}"),
        Event(3, "updates", b"{}"),
        Event(4, "error", b"{}"),
    ]
    got = [ev.id async for ev in filter_modes(_events(items), ["updates"])]
    assert got == [1, 3, 4]


class _Wire:
    """Runs an ASGI response, keeping the body chunks; `beats` is set after two heartbeats."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.beats = asyncio.Event()
        self.disconnect = asyncio.Event()

    async def serve(self, app: Any) -> bytes:
        async def receive() -> MutableMapping[str, Any]:
            await self.disconnect.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.body":
                self.chunks.append(bytes(message.get("body", b"")))
                if sum(c.count(b": heartbeat") for c in self.chunks) >= 2:
                    self.beats.set()

        scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "asgi": {}}
        await app(scope, receive, send)
        return b"".join(self.chunks)


async def test_heartbeats_while_idle_then_frames_and_the_end() -> None:
    go = asyncio.Event()

    async def slow() -> AsyncGenerator[Event, None]:
        yield Event(1, "metadata", b"{}")
        await go.wait()
        yield Event(2, "values", b"{}")

    wire = _Wire()
    task = asyncio.ensure_future(wire.serve(sse_response(slow(), heartbeat_s=0.05)))
    await asyncio.wait_for(wire.beats.wait(), 30)  # the idle stream sent heartbeats
    go.set()
    body = await asyncio.wait_for(task, 30)
    assert body.startswith(b"event: metadata\r\ndata: {}\r\nid: 1\r\n\r\n")
    assert body.count(b": heartbeat\r\n\r\n") >= 2
    assert body.endswith(b"event: values\r\ndata: {}\r\nid: 2\r\n\r\n")


async def test_a_client_leaving_runs_on_disconnect() -> None:
    left = asyncio.Event()
    never = asyncio.Event()

    async def forever() -> AsyncGenerator[Event, None]:
        yield Event(1, "metadata", b"{}")
        await never.wait()
        yield Event(2, "values", b"{}")

    wire = _Wire()
    response = sse_response(forever(), heartbeat_s=15, on_disconnect=left.set)
    task = asyncio.ensure_future(wire.serve(response))
    wire.disconnect.set()
    await asyncio.wait_for(left.wait(), 30)
    await asyncio.wait_for(task, 30)
    assert b"event: values" not in b"".join(wire.chunks)
