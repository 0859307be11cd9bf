"""Two schedulers on one database (two processes, or a restart) fire a due time once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import cast

from pronghorn.auth.principal import Principal
from pronghorn.persistence.db import Database
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.repos import crons as crons_repo
from pronghorn.persistence.repos.common import as_utc
from pronghorn.runtime.access import principal_record
from pronghorn.runtime.services.scheduler import Scheduler, next_run
from pronghorn.runtime.wiring.app_runtime import AppRuntime


def stand_in(db: Database, runs: object) -> AppRuntime:
    """The runtime a Scheduler is given: a stand-in with the two attributes it reads."""
    return cast("AppRuntime", SimpleNamespace(db=db, runs=runs))


CAROL = Principal(identity="carol", display_name="Carol")


class _Runs:
    def __init__(self) -> None:
        self.created: list = []

    async def create(self, thread_id, req, access):
        self.created.append((thread_id, req, access))
        return SimpleNamespace(run_id=f"r{len(self.created)}")


async def test_due_time_is_claimed_once(tmp_path):
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    await db.connect()
    try:
        await upgrade(db)
        due = datetime.now(UTC) - timedelta(seconds=5)
        await db.write(
            lambda conn: crons_repo.insert_cron(
                conn,
                cron_id="c1",
                assistant_id="a",
                thread_id=None,
                schedule="0 * * * *",
                timezone=None,
                end_time=None,
                enabled=True,
                on_run_completed="keep",
                payload={"input": {"x": 1}},
                metadata={},
                user_id="carol",
                owner_id="carol",
                principal=principal_record(CAROL),
                next_run_date=due,
            )
        )
        runs = _Runs()
        a = Scheduler(stand_in(db, runs))
        b = Scheduler(stand_in(db, runs))
        now = datetime.now(UTC)
        assert await a.tick(now) + await b.tick(now) == 1
        assert len(runs.created) == 1
        thread_id, req, access = runs.created[0]
        assert access.identity == "carol"  # the cron's runs execute as its owner
        assert thread_id is None and req.input == {"x": 1} and req.on_completion == "keep"
        assert req.metadata == {"cron_id": "c1"}
        cron = await db.read(lambda conn: crons_repo.get_row(conn, "c1"))
        assert cron is not None
        assert as_utc(cron.next_run_date) == next_run("0 * * * *", None, now)
        # a "restart" after the claim does not fire it again
        assert await Scheduler(stand_in(db, runs)).tick(now) == 0
    finally:
        await db.close()


def test_next_run_in_a_timezone():
    at = datetime(2026, 11, 30, 3, 33, tzinfo=UTC)
    assert next_run("0 9 * * *", "Europe/Paris", at) == datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    assert next_run("*/5 * * * *", None, at) == datetime(2026, 11, 30, 3, 35, tzinfo=UTC)
