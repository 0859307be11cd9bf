"""`SqlEventStore`: the `EventStore` over the app's database (`run_events`).

Fencing (scale-out). An event published under a claim (`fence`) is stored only while that
claim is its run's current one: the transaction that inserts a batch first locks the rows
of the batch's runs `FOR SHARE` and reads their fences, then inserts only the rows whose
fence matches. A claim or a lease recovery moves a run's fence with an UPDATE of that row,
so it waits for an insert under way to commit, and an insert after it sees the new fence:
a replica frozen past its lease that flushes what it buffered finds its rows refused, while
the new owner's rows (which continue after every id stored before the fence moved) and the
other runs' rows of the same batch are stored. Batches with no fenced row (one process,
SQLite) take the plain path: one INSERT, nothing read.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import run_events as repo
from pronghorn.runtime.events.broker import Event, EventRow

log = logging.getLogger("pronghorn.broker")


class SqlEventStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def append(self, rows: Sequence[EventRow]) -> None:
        if any(fence is not None for _, _, fence in rows):
            await self._append_fenced(rows)
            return
        batch = [(run_id, ev.id, ev.event, ev.data) for run_id, ev, _ in rows]
        try:
            await self.db.retry(lambda: self.db.write(lambda conn: repo.append(conn, batch)))
        except IntegrityError:
            # A run deleted while its last events were buffered (its row is gone, and with
            # it every event it had): store the others.
            def unit(conn: Connection) -> int:
                alive = repo.existing_runs(conn, list({r[0] for r in batch}))
                kept = [r for r in batch if r[0] in alive]
                repo.append(conn, kept)
                return len(batch) - len(kept)

            dropped = await self.db.retry(lambda: self.db.write(unit))
            log.info("events of deleted runs not stored", extra={"count": dropped})

    async def _append_fenced(self, rows: Sequence[EventRow]) -> None:
        def unit(conn: Connection) -> tuple[int, int]:
            fences = repo.lock_fences(conn, list({run_id for run_id, _, _ in rows}))
            kept: list[repo.EventRow] = []
            stale = 0
            for run_id, ev, fence in rows:
                current = fences.get(run_id)
                if current is None:
                    continue  # the run was deleted
                if fence is not None and fence != current:
                    stale += 1
                    continue
                kept.append((run_id, ev.id, ev.event, ev.data))
            repo.append(conn, kept)
            return stale, len(rows) - len(kept) - stale

        stale, gone = await self.db.retry(lambda: self.db.write(unit))
        if stale:
            log.warning(
                "events of runs whose claim was taken over not stored (fenced)",
                extra={"count": stale},
            )
        if gone:
            log.info("events of deleted runs not stored", extra={"count": gone})

    async def read(self, run_id: str, after: int, limit: int) -> list[Event]:
        rows = await self.db.write(lambda conn: repo.read(conn, run_id, after, limit))
        return [Event(seq, name, data) for seq, name, data in rows]

    async def last_id(self, run_id: str) -> int:
        return await self.db.write(lambda conn: repo.last_seq(conn, run_id))
