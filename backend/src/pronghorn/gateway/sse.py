"""SSE responses in the LangGraph Platform framing (CRLF, `id:` after `data:`, heartbeats)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable

from sse_starlette import EventSourceResponse, ServerSentEvent

from pronghorn.runtime.engine.request_fields import INT64_MAX
from pronghorn.runtime.errors import Unavailable
from pronghorn.runtime.events.broker import Event


def frame(ev: Event) -> bytes:
    return b"".join(
        (
            b"event: ",
            ev.event.encode(),
            b"\r\ndata: ",
            ev.data,
            b"\r\nid: ",
            str(ev.id).encode(),
            b"\r\n\r\n",
        )
    )


def error_frame(error: str, message: str) -> bytes:
    """An `error` event that is not part of the run's log (it has no id: a client resuming
    with Last-Event-ID continues from the last event it did get)."""
    data = json.dumps({"error": error, "message": message}, separators=(",", ":"))
    return b"event: error\r\ndata: " + data.encode() + b"\r\n\r\n"


def _heartbeat() -> ServerSentEvent:
    return ServerSentEvent(comment="heartbeat")


def sse_response(
    events: AsyncGenerator[Event, None],
    *,
    heartbeat_s: float,
    headers: dict[str, str] | None = None,
    on_disconnect: Callable[[], object] | None = None,
) -> EventSourceResponse:
    """Stream `events`; `on_disconnect` runs if the client leaves before the stream ends."""

    async def body() -> AsyncIterator[bytes]:
        finished = False
        try:
            try:
                async for ev in events:
                    yield frame(ev)
            except Unavailable as exc:  # the broker went away: say so, the client retries
                yield error_frame("BrokerUnavailable", exc.message)
            finished = True
        finally:
            if not finished and on_disconnect is not None:
                on_disconnect()
            with contextlib.suppress(Exception):
                await events.aclose()

    return EventSourceResponse(
        body(),
        headers=headers,
        ping=heartbeat_s,
        ping_message_factory=_heartbeat,
        sep="\r\n",
    )


def parse_last_event_id(value: str | None, *, thread: bool = False) -> int | None:
    """`None` when absent; 0 for a full replay (`-1`, `0`, and `-` on thread streams)."""
    if value is None or value == "":
        return None
    value = value.strip()
    if value in ("-1", "0", "-") or (thread and value == "0-0"):
        return 0
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"Invalid Last-Event-ID {value!r}: expected an event id") from None
    if not 0 <= n <= INT64_MAX:  # ids are signed 64-bit in every event store
        raise ValueError(f"Invalid Last-Event-ID {value!r}: expected an event id")
    return n


def mode_of(event_name: str) -> str:
    """The stream mode an event belongs to (`messages/partial|ns` → `messages`)."""
    base = event_name.split("|", 1)[0]
    if base.startswith("messages/"):
        return "messages"
    if base == "messages":
        return "messages-tuple"
    return base


def filter_modes(
    events: AsyncGenerator[Event, None], modes: list[str] | None
) -> AsyncGenerator[Event, None]:
    if not modes:
        return events
    wanted = set(modes)
    always = {"metadata", "error", "end"}

    async def gen() -> AsyncGenerator[Event, None]:
        async for ev in events:
            mode = mode_of(ev.event)
            if mode in wanted or mode in always:
                yield ev

    return gen()
