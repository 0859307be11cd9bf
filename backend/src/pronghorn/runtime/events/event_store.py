"""`SqlEventStore`: the `EventStore` over the app's database (`run_events`).

Fencing (scale-out). An event published under a claim (`fence`) is stored only while that
claim is its run's current one: the statement that inserts a batch first locks the rows
of the batch's runs `FOR SHARE`, then inserts only the rows whose fence matches (one
statement: persistence/repos/run_events.py `append_fenced`). A claim or a lease recovery
moves a run's fence with an UPDATE of that row, so it waits for an insert under way to
commit, and an insert after it sees the new fence: a replica frozen past its lease that
flushes what it buffered finds its rows refused, while the new owner's rows (which continue
after every id stored before the fence moved) and the other runs' rows of the same batch
are stored. Batches with no fenced row (one process, SQLite) take the plain path: one
INSERT, nothing read. `append_with` adds a unit of the run engine to the batch's
transaction (a run's settle with its last events: one commit).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import run_events as repo
from pronghorn.runtime.events.broker import Event, EventRow, T, Unit

log = logging.getLogger("pronghorn.broker")


def _nothing(_conn: Connection) -> None:
    return None


class SqlEventStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def append(self, rows: Sequence[EventRow]) -> None:
        await self.append_with(rows, _nothing)

    async def append_with(self, rows: Sequence[EventRow], unit: Unit[T]) -> T:
        if any(fence is not None for _, _, fence in rows):
            return await self._append_fenced(rows, unit)
        batch = [(run_id, ev.id, ev.event, ev.data) for run_id, ev, _ in rows]

        def plain(conn: Connection) -> T:
            repo.append(conn, batch)
            return unit(conn)

        try:
            return await self.db.retry(lambda: self.db.write(plain))
        except IntegrityError:
            if not batch:
                raise

            # A run deleted while its last events were buffered (its row is gone, and with
            # it every event it had): store the others.
            def alive_only(conn: Connection) -> tuple[int, T]:
                alive = repo.existing_runs(conn, list({r[0] for r in batch}))
                kept = [r for r in batch if r[0] in alive]
                repo.append(conn, kept)
                return len(batch) - len(kept), unit(conn)

            dropped, result = await self.db.retry(lambda: self.db.write(alive_only))
            if dropped:
                log.info("events of deleted runs not stored", extra={"count": dropped})
            return result

    async def _append_fenced(self, rows: Sequence[EventRow], unit: Unit[T]) -> T:
        batch = [(run_id, ev.id, ev.event, ev.data, fence) for run_id, ev, fence in rows]

        def fenced(conn: Connection) -> tuple[int, int, T]:
            stored = repo.append_fenced(conn, batch)
            if len(stored) == len(batch):
                return 0, 0, unit(conn)
            # Rows left out: say why (their runs' rows are locked already; this read is
            # made only when some row was left out).
            fences = repo.lock_fences(conn, list({r[0] for r in batch}))
            stale = sum(
                1
                for run_id, seq, _, _, fence in batch
                if (run_id, seq) not in stored
                and run_id in fences
                and fence is not None
                and fence != fences[run_id]
            )
            gone = sum(1 for r in batch if r[0] not in fences)
            return stale, gone, unit(conn)

        stale, gone, result = await self.db.retry(lambda: self.db.write(fenced))
        if stale:
            log.warning(
                "events of runs whose claim was taken over not stored (fenced)",
                extra={"count": stale},
            )
        if gone:
            log.info("events of deleted runs not stored", extra={"count": gone})
        return result

    async def read(self, run_id: str, after: int, limit: int) -> list[Event]:
        rows = await self.db.write(lambda conn: repo.read(conn, run_id, after, limit))
        return [Event(seq, name, data) for seq, name, data in rows]

    async def last_id(self, run_id: str) -> int:
        return await self.db.write(lambda conn: repo.last_seq(conn, run_id))
