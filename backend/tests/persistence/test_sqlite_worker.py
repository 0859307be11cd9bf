"""The SQLite worker: one thread, one connection, group commit.

Real SQLite files; a second, independent sqlite3 connection plays "another reader" to see
what is committed; a real child process is killed with SIGKILL for crash safety.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import SQLITE_PRAGMAS, Database, DatabaseError
from pronghorn.persistence.sqlite_thread import WorkerClosed
from pronghorn.persistence.sqlite_worker import SqliteWorker

DEADLINE_S = 30


@pytest.fixture
async def worker(tmp_path: Path) -> AsyncIterator[SqliteWorker]:
    w = SqliteWorker(str(tmp_path / "w.db"), pragmas=SQLITE_PRAGMAS)
    await w.start()
    await w.write(
        lambda c: c.execute(text("CREATE TABLE log (id INTEGER PRIMARY KEY, who TEXT NOT NULL)"))
    )
    try:
        yield w
    finally:
        await w.close()


def committed(w: SqliteWorker) -> list[str]:
    """What an independent connection sees: only committed rows."""
    with sqlite3.connect(w.path) as other:
        return [r[0] for r in other.execute("SELECT who FROM log ORDER BY id")]


def insert(who: str):
    def unit(c: Connection) -> str:
        c.execute(text("INSERT INTO log (who) VALUES (:w)"), {"w": who})
        return who

    return unit


async def wait_until(cond, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


class Gate:
    """A unit that blocks the worker thread until released: writes submitted meanwhile
    queue up and form the next group."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def unit(self, c: Connection) -> str:
        c.execute(text("INSERT INTO log (who) VALUES ('gate')"))
        self.entered.set()
        assert self.release.wait(DEADLINE_S), "gate never released"
        return "gate"


async def test_concurrent_writes_share_commits_in_submission_order(worker: SqliteWorker) -> None:
    gate = Gate()
    first = asyncio.create_task(worker.write(gate.unit))
    await wait_until(gate.entered.is_set, "the gate unit to run")
    before = worker.stats.commits
    tasks = [asyncio.create_task(worker.write(insert(f"w{i}"))) for i in range(50)]
    await wait_until(lambda: len(worker._queue) == 50, "50 queued writes")
    gate.release.set()
    assert await first == "gate"
    assert await asyncio.gather(*tasks) == [f"w{i}" for i in range(50)]
    # The 50 writes queued behind the gate were committed together, in submission order.
    assert worker.stats.commits - before == 2
    assert worker.stats.largest == 50
    assert committed(worker) == ["gate", *[f"w{i}" for i in range(50)]]


async def test_a_caller_resumes_only_after_its_group_committed(worker: SqliteWorker) -> None:
    gate = Gate()
    resumed: list[str] = []
    seen_by_later_unit: dict[str, object] = {}

    async def write_and_mark(name: str, unit) -> None:
        await worker.write(unit)
        resumed.append(name)

    def later(c: Connection) -> str:
        # Runs after "early" in the same group: early's change is applied in this
        # transaction, but not committed, and early's caller has not been resumed.
        c.execute(text("INSERT INTO log (who) VALUES ('later')"))
        seen_by_later_unit["resumed"] = list(resumed)
        seen_by_later_unit["in_tx"] = [
            r[0] for r in c.execute(text("SELECT who FROM log ORDER BY id"))
        ]
        seen_by_later_unit["committed"] = committed(worker)
        return "later"

    first = asyncio.create_task(worker.write(gate.unit))
    await wait_until(gate.entered.is_set, "the gate unit to run")
    early = asyncio.create_task(write_and_mark("early", insert("early")))
    late = asyncio.create_task(write_and_mark("later", later))
    await wait_until(lambda: len(worker._queue) == 2, "two queued writes")
    gate.release.set()
    await asyncio.gather(first, early, late)
    assert seen_by_later_unit["resumed"] == []
    assert seen_by_later_unit["in_tx"] == ["gate", "early", "later"]
    assert seen_by_later_unit["committed"] == ["gate"]
    assert committed(worker) == ["gate", "early", "later"]


async def test_a_failing_unit_fails_only_its_caller(worker: SqliteWorker) -> None:
    gate = Gate()

    def half_then_fail(c: Connection) -> None:
        c.execute(text("INSERT INTO log (who) VALUES ('half')"))
        raise ValueError("unit failed after a write")

    def bad_sql(c: Connection) -> None:
        c.execute(text("INSERT INTO no_such_table VALUES (1)"))

    first = asyncio.create_task(worker.write(gate.unit))
    await wait_until(gate.entered.is_set, "the gate unit to run")
    ok1 = asyncio.create_task(worker.write(insert("ok1")))
    failing = asyncio.create_task(worker.write(half_then_fail))
    broken = asyncio.create_task(worker.write(bad_sql))
    ok2 = asyncio.create_task(worker.write(insert("ok2")))
    await wait_until(lambda: len(worker._queue) == 4, "four queued writes")
    gate.release.set()
    await first
    assert await ok1 == "ok1"
    assert await ok2 == "ok2"
    with pytest.raises(ValueError, match="unit failed after a write"):
        await failing
    with pytest.raises(Exception, match="no such table"):
        await broken
    # The failed units' partial changes were rolled back; their neighbours committed.
    assert committed(worker) == ["gate", "ok1", "ok2"]


async def test_a_lone_failing_write_is_rolled_back(worker: SqliteWorker) -> None:
    def fail(c: Connection) -> None:
        c.execute(text("INSERT INTO log (who) VALUES ('lost')"))
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await worker.write(fail)
    assert await worker.write(insert("after")) == "after"
    assert committed(worker) == ["after"]


async def test_a_caller_cancelled_before_its_group_is_dropped(worker: SqliteWorker) -> None:
    gate = Gate()
    first = asyncio.create_task(worker.write(gate.unit))
    await wait_until(gate.entered.is_set, "the gate unit to run")
    dropped = asyncio.create_task(worker.write(insert("dropped")))
    kept = asyncio.create_task(worker.write(insert("kept")))
    await wait_until(lambda: len(worker._queue) == 2, "two queued writes")
    dropped.cancel()
    gate.release.set()
    await asyncio.gather(first, kept)
    assert dropped.cancelled()
    assert committed(worker) == ["gate", "kept"]


async def test_reads_see_a_snapshot_and_run_in_one_hop(worker: SqliteWorker) -> None:
    await worker.write(insert("a"))

    def two_reads(c: Connection) -> tuple[int, int]:
        n1 = c.execute(text("SELECT count(*) FROM log")).scalar_one()
        n2 = c.execute(text("SELECT count(*) FROM log")).scalar_one()
        return n1, n2

    assert await worker.read(two_reads) == (1, 1)


async def test_the_connection_refuses_the_event_loop_thread(worker: SqliteWorker) -> None:
    # Guard against blocking the loop: the driver connection belongs to the worker thread.
    with pytest.raises(sqlite3.ProgrammingError):
        worker.connection.execute("SELECT 1")
    assert await worker.call(lambda: worker.connection.execute("SELECT 1").fetchone()) == (1,)


async def test_close_finishes_queued_writes_then_refuses(tmp_path: Path) -> None:
    w = SqliteWorker(str(tmp_path / "c.db"), pragmas=SQLITE_PRAGMAS)
    await w.start()
    await w.write(lambda c: c.execute(text("CREATE TABLE log (id INTEGER PRIMARY KEY, who TEXT)")))
    tasks = [asyncio.create_task(w.write(insert(f"q{i}"))) for i in range(10)]
    await asyncio.sleep(0)  # queued, not yet flushed
    await w.close()
    assert [t.result() for t in tasks] == [f"q{i}" for i in range(10)]
    assert len(committed(w)) == 10
    with pytest.raises(WorkerClosed):
        await w.write(insert("late"))


async def test_database_refuses_in_memory_sqlite() -> None:
    db = Database("sqlite+aiosqlite:///:memory:")
    with pytest.raises(DatabaseError, match="needs a database file"):
        await db.connect()


CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from sqlalchemy import text
    from pronghorn.persistence.db import SQLITE_PRAGMAS
    from pronghorn.persistence.sqlite_worker import SqliteWorker

    async def main(path):
        w = SqliteWorker(path, pragmas=SQLITE_PRAGMAS)
        await w.start()
        await w.write(lambda c: c.execute(text(
            "CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, who TEXT)")))

        async def one(i):
            await w.write(lambda c: c.execute(
                text("INSERT INTO log (who) VALUES (:w)"), {"w": f"r{i}"}))
            sys.stdout.write(f"acked r{i}\\n")
            sys.stdout.flush()

        i = 0
        while True:  # concurrent writers until killed
            await asyncio.gather(*(one(i + k) for k in range(8)))
            i += 8

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_every_acknowledged_write_survives_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CHILD,
        str(path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    acked: list[str] = []
    try:
        async with asyncio.timeout(120):  # a loaded machine may start Python slowly
            while len(acked) < 200:
                line = (await proc.stdout.readline()).decode()
                if not line:
                    raise AssertionError(f"child exited early: {await proc.stderr.read()!r}")
                acked.append(line.split()[1])
        os.kill(proc.pid, signal.SIGKILL)  # raises if the child was not running any more
        # Acks the child wrote before it died count as acknowledged too.
        rest = (await proc.stdout.read()).decode()
        acked += [ln.split()[1] for ln in rest.splitlines() if ln.startswith("acked ")]
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
    with sqlite3.connect(path) as conn:
        kept = {r[0] for r in conn.execute("SELECT who FROM log")}
    missing = [a for a in acked if a not in kept]
    assert not missing, f"{len(missing)} acknowledged writes lost: {missing[:5]}"
