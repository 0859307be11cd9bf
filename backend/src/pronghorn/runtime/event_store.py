"""`SqlEventStore`: the `EventStore` over the app's database (`run_events`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import run_events as repo
from pronghorn.runtime.broker import Event

log = logging.getLogger("pronghorn.broker")


class SqlEventStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def append(self, rows: Sequence[tuple[str, Event]]) -> None:
        batch = [(run_id, ev.id, ev.event, ev.data) for run_id, ev in rows]
        try:
            await self.db.retry(lambda: self.db.run(lambda conn: repo.append(conn, batch)))
        except IntegrityError:
            # A run deleted while its last events were buffered (its row is gone, and with
            # it every event it had): store the others.
            def unit(conn: Connection) -> int:
                alive = repo.existing_runs(conn, list({r[0] for r in batch}))
                kept = [r for r in batch if r[0] in alive]
                repo.append(conn, kept)
                return len(batch) - len(kept)

            dropped = await self.db.retry(lambda: self.db.run(unit))
            log.info("events of deleted runs not stored", extra={"count": dropped})

    async def read(self, run_id: str, after: int, limit: int) -> list[Event]:
        rows = await self.db.run(lambda conn: repo.read(conn, run_id, after, limit))
        return [Event(seq, name, data) for seq, name, data in rows]

    async def last_id(self, run_id: str) -> int:
        return await self.db.run(lambda conn: repo.last_seq(conn, run_id))
