"""What the threads, crons and feedback units refuse is a typed value
(persistence/errors.py) that rolls their transaction back, and the runtime turns it
into its own error in one place (runtime/errors.py)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.persistence.errors import CronMissing, FeedbackMissing, ThreadMissing
from pronghorn.persistence.repos import crons, feedback, threads
from pronghorn.runtime.errors import NotFound, refusals_mapped


async def test_changing_what_is_not_there_is_refused(db: Database) -> None:
    tid = str(uuid.uuid4())

    def rename_then_update_missing(conn: Connection) -> None:
        threads.insert_thread(conn, tid, metadata={"title": "kept"})
        threads.update_thread(conn, tid, metadata={"title": "rolled back"})
        threads.update_thread(conn, str(uuid.uuid4()), metadata={})

    with pytest.raises(ThreadMissing):
        await db.write(rename_then_update_missing)
    assert await db.read(lambda conn: threads.get_row(conn, tid)) is None  # all rolled back
    with pytest.raises(CronMissing) as cron:
        await db.write(
            lambda conn: crons.update_cron(
                conn,
                "no-such-cron",
                assistant_id="a",
                schedule="0 * * * *",
                timezone=None,
                end_time=None,
                enabled=False,
                on_run_completed=None,
                payload={},
                metadata={},
                next_run_date=None,
            )
        )
    assert cron.value.cron_id == "no-such-cron"
    with pytest.raises(FeedbackMissing) as removed:
        await db.write(lambda conn: feedback.remove(conn, "no-such-run", "alice"))
    assert (removed.value.run_id, removed.value.user_id) == ("no-such-run", "alice")


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("refusal", "message"),
    [
        (ThreadMissing("t1"), "Thread with ID t1 not found"),
        (CronMissing("c1"), "Cron with ID c1 not found"),
        (FeedbackMissing("r1", "alice"), "No feedback on run r1"),
    ],
)
async def test_the_runtime_maps_each_refusal_once(
    db: Database, refusal: Exception, message: str
) -> None:
    def refuse(_conn: Connection) -> None:
        raise refusal

    with pytest.raises(NotFound) as mapped, refusals_mapped():
        await db.write(refuse)
    assert mapped.value.message == message
