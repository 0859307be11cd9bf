"""`EventWriter`: batches run events into the `EventStore` while runs go.

One writer serves every run of the process: events are buffered and written together — every
`interval_s` after the first one buffered, as soon as `max_rows` are waiting, and whenever a
caller needs them stored (`flush`, at the end of a run). A flush writes everything buffered,
for all runs, in one statement, so concurrent runs ending together share one commit.
`on_stored` is told, per run, the highest id now stored (what a cache may drop). Each event
carries the fence its run was published under (scale-out); the store leaves out those whose
fence is stale, and they count as done: a replica that lost a run never retries them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Connection

from pronghorn.persistence.outage import OutageLog
from pronghorn.runtime.events.broker import Event, EventRow, EventStore, T, Unit

log = logging.getLogger("pronghorn.broker")

FLUSH_INTERVAL_S = 0.05
FLUSH_ROWS = 512
RETRY_DELAY_S = 0.5


def _nothing(_conn: Connection) -> Any:  # Any: a flush without a unit returns nothing
    return None


class EventWriter:
    def __init__(
        self,
        store: EventStore,
        *,
        on_stored: Callable[[dict[str, int]], None],
        interval_s: float = FLUSH_INTERVAL_S,
        max_rows: int = FLUSH_ROWS,
    ) -> None:
        self.store = store
        self.on_stored = on_stored
        self.interval_s = interval_s
        self.max_rows = max_rows
        self._pending: list[EventRow] = []
        # Units of the run engine written with the next batch (`write_later`), in order
        self._units: list[Unit[None]] = []
        self._lock = asyncio.Lock()  # one write at a time, in id order
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._report = OutageLog(log, "storing run events")

    @property
    def pending(self) -> int:
        return len(self._pending)

    def add(self, run_id: str, event: Event, fence: int | None = None) -> None:
        self._pending.append((run_id, event, fence))
        if len(self._pending) >= self.max_rows:
            self._background_flush()
        else:
            self._arm()

    def write_later(self, unit: Unit[None]) -> None:
        """Write `unit` in the transaction of the next batch: within `interval_s`, or with
        an earlier `flush`/`flush_with` (a run's `running` status: no commit of its own)."""
        self._units.append(unit)
        self._arm()

    def _arm(self) -> None:
        if self._timer is None and not self._closed:
            self._timer = asyncio.get_running_loop().call_later(
                self.interval_s, self._background_flush
            )

    def _background_flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task = asyncio.get_running_loop().create_task(self._flush_quietly())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _flush_quietly(self) -> None:
        try:
            await self.flush()
            self._report.ok()
        except Exception as exc:
            self._report.failed(exc)  # and tried again (see flush)

    async def flush(self) -> None:
        """Store everything buffered so far (and what others buffered: one statement)."""
        async with self._lock:
            if self._pending or self._units:
                await self._write(None)

    async def flush_with(self, unit: Unit[T]) -> T:
        """`flush`, with `unit` in the same transaction (one commit, not two): its result."""
        async with self._lock:
            return await self._write(unit)

    async def _write(self, unit: Unit[T] | None) -> T:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        rows, self._pending = self._pending, []
        units, self._units = self._units, []
        last = unit or _nothing

        def written(conn: Connection) -> T:
            for earlier in units:
                earlier(conn)
            return last(conn)

        try:
            result = await self.store.append_with(rows, written if units else last)
        except BaseException:
            # Back in the buffer, in order, and tried again later (a cache drops nothing
            # before it is stored, so readers see no gap meanwhile).
            self._pending[:0] = rows
            self._units[:0] = units
            if (self._pending or self._units) and not self._closed and self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(
                    RETRY_DELAY_S, self._background_flush
                )
            raise
        stored: dict[str, int] = {}
        for run_id, ev, _ in rows:
            stored[run_id] = ev.id
        if stored:
            self.on_stored(stored)
        return result

    async def aclose(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        try:
            await self.flush()
        except Exception:
            log.exception("storing run events at shutdown failed", extra={"count": self.pending})
