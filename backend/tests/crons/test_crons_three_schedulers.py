"""Three schedulers (three replicas: each its own connection pool) on one database, ticking
concurrently and over and over: every due time of every cron fires exactly once.

On PostgreSQL (PRONGHORN_TEST_POSTGRES_URL) the claims race for real on row locks; on
SQLite the three pools share one file (a single host's replicas)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from sqlalchemy.engine import Connection

from pronghorn.auth.principal import Principal
from pronghorn.persistence.db import Database
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.repos import crons as crons_repo
from pronghorn.persistence.repos.common import iso
from pronghorn.runtime.access import principal_record
from pronghorn.runtime.services.scheduler import Scheduler
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from runs.backends import KINDS, database


def stand_in(db: Database, runs: object) -> AppRuntime:
    """The runtime a Scheduler is given: a stand-in with the two attributes it reads."""
    return cast("AppRuntime", SimpleNamespace(db=db, runs=runs))


DAVE = Principal(identity="dave", display_name="Dave")
CRONS = 12
ROUNDS = 4  # due times per cron (one a minute)
TICKS = 3  # ticks of each scheduler per round, all at once


class _Recorder:
    """Stands in for the run manager: records which cron fired, when (its due time)."""

    def __init__(self) -> None:
        self.created: list[tuple[str, str]] = []

    async def create(self, thread_id: Any, req: Any, access: Any) -> SimpleNamespace:
        await asyncio.sleep(0)  # let the other schedulers interleave here too
        self.created.append((req.metadata["cron_id"], access.identity))
        return SimpleNamespace(run_id=f"r{len(self.created)}")


@pytest.fixture(params=KINDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as (cfg, _):
        yield cfg.get("url") or f"sqlite+aiosqlite:///{tmp_path / 'crons.db'}"


async def _insert(db: Database, start: datetime) -> None:

    def unit(conn: Connection):
        for i in range(CRONS):
            crons_repo.insert_cron(
                conn,
                cron_id=f"c{i:02d}",
                assistant_id="a",
                thread_id=None,
                schedule="* * * * *",
                timezone=None,
                end_time=None,
                enabled=True,
                on_run_completed="keep",
                payload={"input": {"i": i}},
                metadata={},
                user_id="dave",
                owner_id="dave",
                principal=principal_record(DAVE),
                next_run_date=start,
            )

    await db.write(unit)


async def test_three_schedulers_fire_each_due_time_once(db_url: str) -> None:
    dbs = [Database(db_url) for _ in range(3)]
    for db in dbs:
        await db.connect()
    try:
        await upgrade(dbs[0])
        start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=10)
        await _insert(dbs[0], start)
        runs = _Recorder()
        schedulers = [Scheduler(stand_in(db, runs)) for db in dbs]
        fired_per_round: list[int] = []
        for n in range(ROUNDS):
            # Round n: the clock is just past due time n, so exactly one firing is due.
            at = start + timedelta(minutes=n, seconds=1)
            ticks = [s.tick(at) for s in schedulers for _ in range(TICKS)]
            fired_per_round.append(sum(await asyncio.gather(*ticks)))

            def unit(conn: Connection):
                rows = [crons_repo.get_row(conn, f"c{i:02d}") for i in range(CRONS)]
                return rows

            rows = await dbs[1].read(unit)
            # Every cron moved on to the next minute, once.
            expected_next = (start + timedelta(minutes=n + 1)).isoformat()
            assert {iso(r.next_run_date) for r in rows if r} == {expected_next}
        assert fired_per_round == [CRONS] * ROUNDS
        per_cron = Counter(cron_id for cron_id, _ in runs.created)
        assert per_cron == {f"c{i:02d}": ROUNDS for i in range(CRONS)}
        assert {who for _, who in runs.created} == {"dave"}
        assert sum(s.fired for s in schedulers) == CRONS * ROUNDS
    finally:
        for db in dbs:
            await db.close()
