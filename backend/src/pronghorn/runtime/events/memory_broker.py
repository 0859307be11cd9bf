"""In-process EventBroker: a cache of recent events per run (and per thread) in memory, in
front of the `EventStore` that keeps every run event.

Every published run event goes to the `EventWriter`, which stores it within
`FLUSH_INTERVAL_S`; `flush` waits for that. Retention bounds only what is cached: a run's log
is trimmed from the front once it holds more than `run_retention_bytes`, and across all logs
`total_retention_bytes` is enforced by trimming the largest run logs and dropping thread
logs — but a run event is dropped from memory only once the store has it. A subscriber that
resumes from an id no longer cached reads the stored events up to the cache, then continues
from memory. A closed run's log leaves the index once all of it is stored — normally at
once (subscribers attached to it finish reading it); later readers read the store. Thread
logs are live-only and never stored; a janitor drops those nobody follows whose runs are
all gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import AsyncGenerator

from pronghorn.runtime.events.broker import Event, EventStore, T, Unit
from pronghorn.runtime.events.event_writer import FLUSH_INTERVAL_S, FLUSH_ROWS, EventWriter

log = logging.getLogger("pronghorn.broker")

JANITOR_PERIOD_S = 30.0
READ_PAGE = 500  # stored events read per query when a subscriber catches up


def _size(ev: Event) -> int:
    return len(ev.data) + len(ev.event)


class _Log:
    __slots__ = (
        "closed",
        "events",
        "fence",
        "key",
        "last_id",
        "nbytes",
        "stored",
        "subscribers",
        "thread_id",
        "wake",
    )

    def __init__(self, key: str, thread_id: str | None = None, last_id: int = 0) -> None:
        self.key = key
        self.thread_id = thread_id
        self.events: deque[Event] = deque()
        self.nbytes = 0
        self.last_id = last_id
        # Run logs: ids up to here are in the store and may leave memory. Thread logs are
        # not stored: any of their events may go.
        self.stored = last_id if thread_id is not None else 1 << 62
        self.closed = False
        self.fence: int | None = None  # the claim the run's events are stored under
        self.subscribers = 0
        self.wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @property
    def first_id(self) -> int:
        """The oldest id still cached (last_id + 1 when nothing is)."""
        return self.events[0].id if self.events else self.last_id + 1

    def append(self, event: str, data: bytes) -> Event:
        self.last_id += 1
        ev = Event(self.last_id, event, data)
        self.events.append(ev)
        self.nbytes += _size(ev)
        self._notify()
        return ev

    def trim(self, limit: int) -> int:
        """Drop the oldest events the store has until at most `limit` bytes are held."""
        freed = 0
        while self.nbytes > limit and self.events and self.events[0].id <= self.stored:
            size = _size(self.events.popleft())
            self.nbytes -= size
            freed += size
        return freed

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._notify()

    def _notify(self) -> None:
        if not self.wake.done():
            self.wake.set_result(None)
        self.wake = asyncio.get_running_loop().create_future()

    def after(self, after: int) -> list[Event]:
        """Cached events with id > after (the caller makes sure after >= first_id - 1)."""
        if not self.events or self.events[-1].id <= after:
            return []
        start = max(after - self.events[0].id + 1, 0)  # ids are contiguous in the deque
        return [self.events[i] for i in range(start, len(self.events))]


class MemoryBroker:
    def __init__(
        self,
        *,
        store: EventStore,
        run_retention_bytes: int,
        total_retention_bytes: int,
        flush_interval_s: float = FLUSH_INTERVAL_S,
        flush_rows: int = FLUSH_ROWS,
    ) -> None:
        self.store = store
        self.run_retention_bytes = run_retention_bytes
        self.total_retention_bytes = total_retention_bytes
        self.writer = EventWriter(
            store, on_stored=self._stored, interval_s=flush_interval_s, max_rows=flush_rows
        )
        self._runs: dict[str, _Log] = {}
        self._threads: OrderedDict[str, _Log] = OrderedDict()
        self._total = 0
        self._janitor: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self) -> None:
        self._janitor = asyncio.create_task(self._sweep_loop(), name="broker-janitor")

    async def aclose(self) -> None:
        if self._janitor is not None:
            self._janitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._janitor
        await self.writer.aclose()
        for lg in list(self._runs.values()) + list(self._threads.values()):
            lg.close()

    async def ping(self) -> bool:
        return True

    async def answering(self, within_s: float) -> bool:
        return True

    # -- writing -----------------------------------------------------------------------
    async def open_run(
        self, run_id: str, thread_id: str, *, resume: bool = False, fence: int | None = None
    ) -> None:
        if run_id in self._runs:
            return
        last = await self.store.last_id(run_id) if resume else 0
        if run_id not in self._runs:  # (the await above may have let another open it)
            lg = self._runs[run_id] = _Log(run_id, thread_id, last_id=last)
            lg.fence = fence

    async def publish(self, run_id: str, event: str, data: bytes) -> int:
        lg = self._runs.get(run_id)
        if lg is None or lg.closed:
            raise KeyError(run_id)
        ev = lg.append(event, data)
        self.writer.add(run_id, ev, lg.fence)
        self._account(lg, _size(ev))
        if lg.thread_id is not None:
            tl = self._thread_log(lg.thread_id)
            self._account(tl, _size(tl.append(event, data)))
        return ev.id

    async def publish_thread(self, thread_id: str, event: str, data: bytes) -> int:
        tl = self._thread_log(thread_id)
        ev = tl.append(event, data)
        self._account(tl, _size(ev))
        return ev.id

    async def flush(self, run_id: str) -> None:
        await self.writer.flush()

    async def flush_with(self, run_id: str, unit: Unit[T]) -> T:
        return await self.writer.flush_with(unit)

    def write_later(self, unit: Unit[None]) -> None:
        self.writer.write_later(unit)

    async def close_run(self, run_id: str, result: object = None) -> None:
        # `result` is for other processes; in this one the run's Job has the output.
        lg = self._runs.get(run_id)
        if lg is None:
            return
        if lg.stored < lg.last_id:
            try:
                await self.writer.flush()
            except Exception:
                log.exception("storing run events failed", extra={"run_id": run_id})
        lg.close()
        # Readers from now on read the store; subscribers already attached drain `lg`. If
        # some events are not stored yet (the database failed), the log stays until they are.
        if lg.stored >= lg.last_id:
            self._forget(lg)

    def _forget(self, lg: _Log) -> None:
        if self._runs.get(lg.key) is lg:
            del self._runs[lg.key]
            self._total -= lg.nbytes

    async def drop_thread(self, thread_id: str) -> None:
        tl = self._threads.pop(thread_id, None)
        if tl is not None:
            self._total -= tl.nbytes
            tl.close()

    def _stored(self, upto: dict[str, int]) -> None:
        """The writer stored these runs' events up to these ids: they may leave memory."""
        for run_id, last in upto.items():
            lg = self._runs.get(run_id)
            if lg is None:
                continue
            lg.stored = max(lg.stored, last)
            if lg.closed and lg.stored >= lg.last_id:
                self._forget(lg)
            elif lg.nbytes > self.run_retention_bytes:
                self._total -= lg.trim(self.run_retention_bytes)
        if self._total > self.total_retention_bytes:
            self._enforce_total()

    def _thread_log(self, thread_id: str) -> _Log:
        tl = self._threads.get(thread_id)
        if tl is None:
            tl = self._threads[thread_id] = _Log(thread_id)
        return tl

    def _account(self, lg: _Log, added: int) -> None:
        self._total += added
        if lg.nbytes > self.run_retention_bytes:
            self._total -= lg.trim(self.run_retention_bytes)
        if self._total > self.total_retention_bytes:
            self._enforce_total()

    def _enforce_total(self) -> None:
        # The oldest thread logs nobody follows go first, then the stored part of the
        # largest run logs (what is not stored yet stays until the writer has it).
        for key in list(self._threads):
            if self._total <= self.total_retention_bytes:
                return
            tl = self._threads[key]
            if tl.subscribers == 0:
                self._total -= tl.nbytes
                del self._threads[key]
                tl.close()
        for lg in sorted(self._runs.values(), key=lambda x: x.nbytes, reverse=True):
            if self._total <= self.total_retention_bytes:
                return
            self._total -= lg.trim(0)

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(JANITOR_PERIOD_S)
            self.sweep()

    def sweep(self) -> int:
        """Drop thread logs nobody follows whose runs are all gone; return how many."""
        held = {lg.thread_id for lg in self._runs.values()}
        dropped = 0
        for key in list(self._threads):
            tl = self._threads[key]
            if key not in held and tl.subscribers == 0:
                self._total -= tl.nbytes
                del self._threads[key]
                dropped += 1
        return dropped

    # -- reading -----------------------------------------------------------------------
    async def ended(self, run_id: str) -> bytes | None:
        async for _ in self.subscribe(run_id, None):
            pass
        return None

    def subscribe(self, run_id: str, after: int | None) -> AsyncGenerator[Event, None]:
        """The log is looked up now, so a run that closes before iteration starts is still
        read to its end from memory."""
        lg = self._runs.get(run_id)
        if lg is None:
            return self._stored_only(run_id, after)
        return self._follow(run_id, lg, lg.last_id if after is None else after)

    async def _stored_only(self, run_id: str, after: int | None) -> AsyncGenerator[Event, None]:
        """A run with no log here (finished, or from before a restart): the store."""
        if after is None:
            return
        cursor = after
        while True:
            page = await self.store.read(run_id, cursor, READ_PAGE)
            for ev in page:
                yield ev
            if len(page) < READ_PAGE:
                return
            cursor = page[-1].id

    async def _follow(self, run_id: str, lg: _Log, after: int) -> AsyncGenerator[Event, None]:
        cursor = after
        while True:
            first = lg.first_id
            if cursor < first - 1:
                # Trimmed from memory, so stored: read the gap from the store.
                page = await self.store.read(run_id, cursor, min(READ_PAGE, first - 1 - cursor))
                if not page:
                    log.error(
                        "events missing from the store", extra={"run_id": run_id, "after": cursor}
                    )
                    cursor = first - 1
                    continue
                for ev in page:
                    yield ev
                cursor = page[-1].id
                continue
            batch = lg.after(cursor)
            for ev in batch:
                yield ev
            if batch:
                cursor = batch[-1].id
                continue
            if lg.closed:
                return
            await asyncio.shield(lg.wake)

    async def subscribe_thread(
        self, thread_id: str, after: int | None
    ) -> AsyncGenerator[Event, None]:
        tl = self._thread_log(thread_id)
        cursor = tl.last_id if after is None else after
        tl.subscribers += 1
        try:
            while True:
                batch = tl.after(max(cursor, tl.first_id - 1))
                for ev in batch:
                    yield ev
                if batch:
                    cursor = batch[-1].id
                    continue
                if tl.closed or self._threads.get(thread_id) is not tl:
                    return
                await asyncio.shield(tl.wake)
        finally:
            tl.subscribers -= 1
