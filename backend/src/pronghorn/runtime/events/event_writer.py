"""`EventWriter`: batches run events into the `EventStore` while runs go.

One writer serves every run of the process: events are buffered and written together — every
`interval_s` after the first one buffered, as soon as `max_rows` are waiting, and whenever a
caller needs them stored (`flush`, at the end of a run). A flush writes everything buffered,
for all runs, in one statement, so concurrent runs ending together share one commit.
`on_stored` is told, per run, the highest id now stored (what a cache may drop). Each event
carries the fence its run was published under (scale-out); the store leaves out those whose
fence is stale, and they count as done: a replica that lost a run never retries them.

A run's `values` events are snapshots of its whole state, each superseding the one before
(per namespace: `values`, `values|<ns>`). Once the run ends (`flush(ending=run_id)`, before
its final status is written), only the last of each is kept: the earlier ones in the batch
are not written, and those stored by earlier batches are deleted in the same transaction.
Live subscribers got every one of them from the broker's memory; a replay after the end
gets the run's final state once instead of once per step (a turn's run_events no longer
grow with the number of steps times the size of the state).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pronghorn.persistence.outage import OutageLog
from pronghorn.runtime.events.broker import Event, EventRow, EventStore, Superseded

log = logging.getLogger("pronghorn.broker")

FLUSH_INTERVAL_S = 0.05
FLUSH_ROWS = 512
RETRY_DELAY_S = 0.5


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
        self._lock = asyncio.Lock()  # one write at a time, in id order
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._report = OutageLog(log, "storing run events")
        # run → {values event name: highest id stored}, for the runs still going
        self._values_stored: dict[str, dict[str, int]] = {}
        self._ending: set[str] = set()  # runs whose superseded snapshots go at the next flush

    @property
    def pending(self) -> int:
        return len(self._pending)

    def add(self, run_id: str, event: Event, fence: int | None = None) -> None:
        self._pending.append((run_id, event, fence))
        if len(self._pending) >= self.max_rows:
            self._background_flush()
        elif self._timer is None and not self._closed:
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

    async def flush(self, ending: str | None = None) -> None:
        """Store everything buffered so far (and what others buffered: one statement).
        `ending`: that run publishes no more state; keep only its last `values` events."""
        async with self._lock:
            if ending is not None:
                self._ending.add(ending)
            ended, self._ending = self._ending, set()
            if not self._pending and not any(r in self._values_stored for r in ended):
                for run_id in ended:
                    self._values_stored.pop(run_id, None)
                return
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            rows, self._pending = self._pending, []
            kept, superseded = self._supersede(rows, ended)
            try:
                await self.store.append(kept, superseded)
            except BaseException:
                self._ending.update(ended)
                # Back in the buffer, in order, and tried again later (a cache drops nothing
                # before it is stored, so readers see no gap meanwhile).
                self._pending[:0] = rows
                if not self._closed and self._timer is None:
                    self._timer = asyncio.get_running_loop().call_later(
                        RETRY_DELAY_S, self._background_flush
                    )
                raise
            stored: dict[str, int] = {}
            for run_id, ev, _ in rows:
                stored[run_id] = ev.id
                if is_values(ev.event) and run_id not in ended:
                    self._values_stored.setdefault(run_id, {})[ev.event] = ev.id
            for run_id in ended:
                self._values_stored.pop(run_id, None)
            self.on_stored(stored)

    def _supersede(
        self, rows: list[EventRow], ended: set[str]
    ) -> tuple[list[EventRow], list[Superseded]]:
        """The rows to write, without the ended runs' superseded `values` events, and what
        to delete of those already stored: (run, event name, the id of the one kept)."""
        if not ended:
            return rows, []
        last: dict[tuple[str, str], int] = {}
        for run_id, ev, _ in rows:
            if run_id in ended and is_values(ev.event):
                last[(run_id, ev.event)] = ev.id
        kept = [
            r
            for r in rows
            if r[0] not in ended or not is_values(r[1].event) or last[(r[0], r[1].event)] == r[1].id
        ]
        superseded: list[Superseded] = []
        for run_id in ended:
            for name, upto in self._values_stored.get(run_id, {}).items():
                superseded.append((run_id, name, last.get((run_id, name), upto)))
        return kept, superseded

    def forget(self, run_id: str) -> None:
        """The run's log is closed here (its `values` need no more tracking)."""
        self._values_stored.pop(run_id, None)

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


def is_values(event: str) -> bool:
    """A `values` event (of the graph or of a subgraph: `values|<ns>`)."""
    return event == "values" or event.startswith("values|")
