"""The event log behind every stream: an append-only sequence of events per run (and per
thread), with strictly increasing integer ids. Subscribers read from any id, then live.
When a run ends its events are written to the `run_events` table and the in-memory log is
dropped; joining a finished run replays them from there.

`EventBroker` is the interface; `MemoryBroker` (memory_broker.py) is the in-process
implementation. A Redis Streams one plugs in for scale-out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    event: str
    data: bytes  # one line of compact JSON


class EventBroker(Protocol):
    async def open_run(self, run_id: str, thread_id: str) -> None:
        """Create the run's log (idempotent)."""

    async def publish(self, run_id: str, event: str, data: bytes) -> int:
        """Append to the run's log (and its thread's log); return the event id."""

    async def close_run(self, run_id: str) -> None:
        """No more events for the run; subscribers drain and end."""

    async def publish_thread(self, thread_id: str, event: str, data: bytes) -> int:
        """Append to the thread's log only (e.g. lifecycle events)."""

    def subscribe(self, run_id: str, after: int = 0) -> AsyncIterator[Event]:
        """Events with id > after, then live ones, until the run's log is closed."""

    def subscribe_thread(self, thread_id: str, after: int | None) -> AsyncIterator[Event]:
        """The thread's events after `after` (None: only new ones). Never ends by itself."""

    def events_of(self, run_id: str) -> list[Event]:
        """Every event still held for a run."""

    def drop_run(self, run_id: str) -> None:
        """Forget a finished run's log (it is not kept for replay)."""

    def has_run(self, run_id: str) -> bool:
        """Whether the run's log is still held."""

    async def ping(self) -> bool: ...

    async def aclose(self) -> None: ...
