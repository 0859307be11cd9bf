"""The event log behind every stream: an append-only sequence of events per run (and per
thread), with strictly increasing integer ids. Subscribers read from any id, then live.

Every run event is *kept* in the `run_events` table: an `EventStore` receives them in
batches while the run goes. A broker only *caches* recent events (bounded in bytes) and fans
live ones out; a subscriber resuming from an id the cache no longer holds reads the gap from
the store, then continues from the cache, with no gap and no duplicate. A cache may only
drop events the store has confirmed.

`EventBroker` is the interface the rest of the code sees; `MemoryBroker`
(memory_broker.py) is the in-process implementation, `SqlEventStore` (event_store.py) the
store. `RedisBroker` (redis_broker.py) is the scale-out one, on Redis Streams.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from sqlalchemy.engine import Connection

from pronghorn.runtime.errors import Unavailable


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    event: str
    data: bytes  # one line of compact JSON


T = TypeVar("T")
# A unit of work of the run engine written in the same transaction as a batch of events
# (persistence/repos/run_units.py): a run's settle, say, with its last events.
Unit = Callable[[Connection], T]


class BrokerUnavailable(Unavailable):
    """The broker's backing service (Redis) cannot be reached right now; retry later."""


# (run_id, event, fence): the fence is the claim the publishing replica holds on the run
# (scale-out), None when no claim applies (one process; a sweeper closing a run's log).
EventRow = tuple[str, Event, int | None]


class EventStore(Protocol):
    """Durable storage of run events (the `run_events` table)."""

    async def append(self, rows: Sequence[EventRow]) -> None:
        """Store rows of any runs in one transaction. A row whose fence is not the run's
        current one (its publisher lost the claim) is left out, and so is one whose run was
        deleted; every other row is stored."""

    async def append_with(self, rows: Sequence[EventRow], unit: Unit[T]) -> T:
        """`append`, then `unit`, in one transaction (`rows` may be empty): its result; if
        it raises, nothing of either is stored."""
        ...

    async def read(self, run_id: str, after: int, limit: int) -> list[Event]:
        """Up to `limit` stored events of the run with id > after, in order."""
        ...

    async def last_id(self, run_id: str) -> int:
        """The highest stored event id of the run (0 if none)."""
        ...


class EventBroker(Protocol):
    async def open_run(
        self, run_id: str, thread_id: str, *, resume: bool = False, fence: int | None = None
    ) -> None:
        """Create the run's log (idempotent). `resume`: the run was started before (by a
        process that died) — its ids continue after the ones already stored. `fence`
        (scale-out): the claim this process executes the run under; its events are stored
        only while that claim is the run's current one."""

    async def publish(self, run_id: str, event: str, data: bytes) -> int:
        """Append to the run's log (and its thread's log); return the event id."""
        ...

    async def flush(self, run_id: str) -> None:
        """Return once every event published for the run so far is stored."""

    def write_later(self, unit: Unit[None]) -> None:
        """Write `unit` in the transaction of the next batch of events (within the store's
        flush interval, or with an earlier `flush`/`flush_with`)."""

    async def flush_with(self, run_id: str, unit: Unit[T]) -> T:
        """`flush`, writing `unit` in the same transaction as the last events (its result);
        if it raises, those events are not stored yet (they are tried again later)."""
        ...

    async def close_run(self, run_id: str, result: object = None) -> None:
        """No more events for the run (they are stored first); subscribers drain and end.
        `result`: the run's output (what `join` answers; None: none), handed with the end
        to followers in other processes (`ended`)."""

    async def ended(self, run_id: str) -> bytes | None:
        """Return once the run's log is closed (at once for a finished run): the result it
        was closed with as JSON, when this broker carries one across processes, else None
        (then the database has it)."""
        ...

    async def publish_thread(self, thread_id: str, event: str, data: bytes) -> int:
        """Append to the thread's log only (e.g. lifecycle events)."""
        ...

    def subscribe(self, run_id: str, after: int | None) -> AsyncGenerator[Event, None]:
        """The run's events with id > after, then live ones until the run's log is closed.
        `after=None`: only events published from now on (nothing, for a finished run)."""
        ...

    def subscribe_thread(self, thread_id: str, after: int | None) -> AsyncGenerator[Event, None]:
        """The thread's events after `after` (None: only new ones). Never ends by itself."""
        ...

    async def drop_thread(self, thread_id: str) -> None:
        """Forget a thread's log (the thread is being deleted)."""

    async def ping(self) -> bool: ...

    async def answering(self, within_s: float) -> bool:
        """Whether the broker answers, for a request's path: a broker that talked to this
        process within the last `within_s` is taken at its word (no round trip); else
        `ping`."""
        ...

    async def aclose(self) -> None:
        """Store what is pending and stop."""
