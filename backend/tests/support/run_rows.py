"""A migrated SQLite database and bare thread + run rows, for tests of what stores a run's
events (the event store, the brokers): stored events belong to a run."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database, default_sqlite_url
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.tables import runs as runs_table
from pronghorn.persistence.tables import threads as threads_table


@asynccontextmanager
async def sqlite_db(folder: Path) -> AsyncIterator[Database]:
    """A connected, migrated SQLite database in `folder`, closed after."""
    database = Database(default_sqlite_url(folder))
    await database.connect()
    await upgrade(database)
    try:
        yield database
    finally:
        await database.close()


async def new_run(
    db: Database, *, thread_status: str = "idle", owner_id: str | None = None
) -> tuple[str, str]:
    """A new thread and a queued (unclaimed) run row on it: (thread id, run id)."""
    tid, rid = str(uuid.uuid4()), str(uuid.uuid4())
    thread = threads_repo.new_thread_row(tid, status=thread_status)

    def unit(conn: Connection):
        conn.execute(threads_table.insert().values(**thread))
        row = runs_repo.new_run_row(
            run_id=rid,
            thread_id=tid,
            assistant_id="a",
            kwargs={},
            metadata={},
            multitask_strategy="enqueue",
            temporary=False,
            owner=None,
            owner_id=owner_id,
        )
        conn.execute(runs_table.insert().values(**row))

    await db.write(unit)
    return tid, rid
