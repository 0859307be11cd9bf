"""SSE framing (gateway/sse.py): the bytes of a frame, heartbeats, Last-Event-ID parsing, and
a round trip through the official SDK's own SSE decoder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, MutableMapping
from types import SimpleNamespace
from typing import Any

import pytest
from langgraph_sdk.sse import BytesLineDecoder, SSEDecoder

from pronghorn.gateway.server_exit import ServerExit
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


async def _events(items: list[Event]) -> AsyncIterator[Event]:
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
        self.head: dict[bytes, bytes] = {}
        self.chunks: list[bytes] = []
        self.ended = False
        self.beats = asyncio.Event()
        self.disconnect = asyncio.Event()

    async def serve(self, response: Any, method: str = "GET", **scope_extra: Any) -> bytes:
        async def receive() -> MutableMapping[str, Any]:
            await self.disconnect.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.head = dict(message["headers"])
            if message["type"] == "http.response.body":
                self.ended = not message.get("more_body", False)
                self.chunks.append(bytes(message.get("body", b"")))
                if sum(c.count(b": heartbeat") for c in self.chunks) >= 2:
                    self.beats.set()

        scope = {"type": "http", "method": method, "path": "/", "headers": [], "asgi": {}}
        scope.update(scope_extra)
        await response(scope, receive, send)
        return b"".join(self.chunks)


async def test_heartbeats_while_idle_then_frames_and_the_end() -> None:
    go = asyncio.Event()

    async def slow() -> AsyncIterator[Event]:
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
    assert wire.ended
    assert wire.head[b"content-type"] == b"text/event-stream; charset=utf-8"
    assert wire.head[b"cache-control"] == b"no-store"
    assert wire.head[b"x-accel-buffering"] == b"no"


async def test_a_client_leaving_runs_on_disconnect() -> None:
    left = asyncio.Event()
    never = asyncio.Event()

    async def forever() -> AsyncIterator[Event]:
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


async def test_a_stopping_server_cuts_open_streams_short() -> None:
    left = asyncio.Event()
    never = asyncio.Event()
    sent = asyncio.Event()

    async def forever() -> AsyncIterator[Event]:
        yield Event(1, "metadata", b"{}")
        sent.set()
        await never.wait()
        yield Event(2, "values", b"{}")

    server_exit = ServerExit()
    app = SimpleNamespace(state=SimpleNamespace(server_exit=server_exit))
    wire = _Wire()
    response = sse_response(forever(), heartbeat_s=15, on_disconnect=left.set)
    task = asyncio.ensure_future(wire.serve(response, app=app))
    await asyncio.wait_for(sent.wait(), 30)
    server_exit.stop()
    await asyncio.wait_for(task, 30)
    assert left.is_set()  # the run's stream was told it was cut short
    assert not wire.ended  # no clean end: the client sees the drop and may resume
    assert b"event: metadata" in b"".join(wire.chunks)
    # a stream opened once the server is stopping ends at once
    late = _Wire()
    await asyncio.wait_for(late.serve(sse_response(forever(), heartbeat_s=15), app=app), 30)
    assert not late.ended


async def test_head_gets_the_headers_and_no_stream() -> None:
    async def events() -> AsyncIterator[Event]:
        yield Event(1, "metadata", b"{}")

    wire = _Wire()
    body = await asyncio.wait_for(wire.serve(sse_response(events(), heartbeat_s=15), "HEAD"), 30)
    assert body == b"" and wire.ended
    assert wire.head[b"content-type"].startswith(b"text/event-stream")
