"""In-process EventBroker: per-run and per-thread logs in memory, bounded in bytes.

Retention: each log is trimmed from the front once it holds more than
`run_retention_bytes`; across all logs, `total_retention_bytes` is enforced by trimming the
oldest closed logs first. A finished run's log is dropped once its events are persisted
(the executor calls `drop_run`); a janitor drops any closed log left over after
`CLOSED_GRACE_S`, and thread logs nobody follows whose runs are all gone.
A subscriber that resumes from an id that was trimmed away gets everything still held.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator

from pronghorn.runtime.broker import Event

log = logging.getLogger("pronghorn.broker")

JANITOR_PERIOD_S = 30.0
CLOSED_GRACE_S = 60.0


class _Log:
    __slots__ = (
        "closed",
        "closed_at",
        "events",
        "key",
        "last_id",
        "nbytes",
        "subscribers",
        "thread_id",
        "wake",
    )

    def __init__(self, key: str, thread_id: str | None = None) -> None:
        self.key = key
        self.thread_id = thread_id
        self.events: deque[Event] = deque()
        self.nbytes = 0
        self.last_id = 0
        self.closed = False
        self.closed_at = 0.0
        self.subscribers = 0
        self.wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def append(self, event: str, data: bytes) -> Event:
        self.last_id += 1
        ev = Event(self.last_id, event, data)
        self.events.append(ev)
        self.nbytes += len(data) + len(event)
        self._notify()
        return ev

    def trim(self, limit: int) -> int:
        freed = 0
        while self.nbytes > limit and len(self.events) > 1:
            ev = self.events.popleft()
            size = len(ev.data) + len(ev.event)
            self.nbytes -= size
            freed += size
        return freed

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.closed_at = time.monotonic()
            self._notify()

    def _notify(self) -> None:
        if not self.wake.done():
            self.wake.set_result(None)
        self.wake = asyncio.get_running_loop().create_future()

    def after(self, after: int) -> list[Event]:
        if not self.events or self.events[-1].id <= after:
            return []
        first = self.events[0].id
        if after < first:
            return list(self.events)
        # ids are contiguous within the deque
        start = after - first + 1
        return [self.events[i] for i in range(start, len(self.events))]


class MemoryBroker:
    def __init__(
        self,
        *,
        run_retention_bytes: int,
        total_retention_bytes: int,
    ) -> None:
        self.run_retention_bytes = run_retention_bytes
        self.total_retention_bytes = total_retention_bytes
        self._runs: OrderedDict[str, _Log] = OrderedDict()
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
        for lg in list(self._runs.values()) + list(self._threads.values()):
            lg.close()

    async def ping(self) -> bool:
        return True

    # -- writing -----------------------------------------------------------------------
    async def open_run(self, run_id: str, thread_id: str) -> None:
        if run_id not in self._runs:
            self._runs[run_id] = _Log(run_id, thread_id)

    async def publish(self, run_id: str, event: str, data: bytes) -> int:
        lg = self._runs.get(run_id)
        if lg is None:
            raise KeyError(run_id)
        ev = lg.append(event, data)
        self._account(lg, len(data) + len(event))
        if lg.thread_id is not None:
            tl = self._thread_log(lg.thread_id)
            tl.append(event, data)
            self._account(tl, len(data) + len(event))
        return ev.id

    async def publish_thread(self, thread_id: str, event: str, data: bytes) -> int:
        tl = self._thread_log(thread_id)
        ev = tl.append(event, data)
        self._account(tl, len(data) + len(event))
        return ev.id

    async def close_run(self, run_id: str) -> None:
        lg = self._runs.get(run_id)
        if lg is not None:
            lg.close()
            self._runs.move_to_end(run_id)

    def drop_run(self, run_id: str) -> None:
        """Forget a closed run's log now (subscribers already attached still drain it)."""
        lg = self._runs.pop(run_id, None)
        if lg is not None:
            self._total -= lg.nbytes
            lg.close()

    def drop_thread(self, thread_id: str) -> None:
        tl = self._threads.pop(thread_id, None)
        if tl is not None:
            self._total -= tl.nbytes
            tl.close()

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
        # Oldest closed run logs go first, then the oldest thread logs, then open run logs.
        for table, closed_only in ((self._runs, True), (self._threads, False), (self._runs, False)):
            for key in list(table):
                if self._total <= self.total_retention_bytes:
                    return
                lg = table[key]
                if closed_only and not lg.closed:
                    continue
                if lg.closed or table is self._threads:
                    self._total -= lg.nbytes
                    del table[key]
                    lg.close()
                else:
                    self._total -= lg.trim(lg.nbytes // 2)

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(JANITOR_PERIOD_S)
            self.sweep()

    def sweep(self) -> int:
        """Drop run logs closed longer than CLOSED_GRACE_S; return how many."""
        cutoff = time.monotonic() - CLOSED_GRACE_S
        dropped = 0
        for key in list(self._runs):
            lg = self._runs[key]
            if lg.closed and lg.closed_at <= cutoff:
                self._total -= lg.nbytes
                del self._runs[key]
                dropped += 1
        held = {lg.thread_id for lg in self._runs.values()}
        for key in list(self._threads):
            tl = self._threads[key]
            if key not in held and tl.subscribers == 0:
                self._total -= tl.nbytes
                del self._threads[key]
        return dropped

    # -- reading -----------------------------------------------------------------------
    def has_run(self, run_id: str) -> bool:
        return run_id in self._runs

    def run_last_id(self, run_id: str) -> int:
        lg = self._runs.get(run_id)
        return lg.last_id if lg else 0

    def subscribe(self, run_id: str, after: int = 0) -> AsyncIterator[Event]:
        """The run's events after `after`, then live ones. The log is looked up now, so a run
        that finishes (and is dropped) before iteration starts is still read to its end."""
        return self._follow(self._runs.get(run_id), after)

    async def _follow(self, lg: _Log | None, after: int) -> AsyncIterator[Event]:
        if lg is None:
            return
        cursor = after
        while True:
            batch = lg.after(cursor)
            for ev in batch:
                yield ev
            if batch:
                cursor = batch[-1].id
                continue
            if lg.closed:
                return
            await asyncio.shield(lg.wake)

    def events_of(self, run_id: str) -> list[Event]:
        """Every event still held for a run (to persist it when the run ends)."""
        lg = self._runs.get(run_id)
        return list(lg.events) if lg is not None else []

    async def subscribe_thread(self, thread_id: str, after: int | None) -> AsyncIterator[Event]:
        tl = self._thread_log(thread_id)
        cursor = tl.last_id if after is None else after
        tl.subscribers += 1
        try:
            while True:
                batch = tl.after(cursor)
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
