"""`outlast_outage` and `OutageLog`: what waits through a database outage, and what it logs."""

from __future__ import annotations

import asyncio
import logging

import pytest

from pronghorn.persistence import outage
from pronghorn.persistence.outage import (
    OutageLog,
    OutageOutlasted,
    OutageWaits,
    is_database_unreachable,
    outlast_outage,
)


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outage, "FIRST_DELAY_S", 0.001)
    monkeypatch.setattr(outage, "MAX_DELAY_S", 0.002)


async def test_it_tries_again_while_the_database_is_unreachable(caplog):
    calls = 0

    async def settle() -> str:
        nonlocal calls
        calls += 1
        if calls < 4:
            raise ConnectionRefusedError(111, "Connect call failed")
        return "settled"

    with caplog.at_level(logging.INFO, logger="pronghorn.db"):
        assert await outlast_outage(settle, what="settling a run") == "settled"
    assert calls == 4
    lines = [r.getMessage() for r in caplog.records]
    # One line for the outage (not one per try) and one when it is over.
    assert [m for m in lines if "waits" in m] == [
        "settling a run waits: the database is unreachable ([Errno 111] Connect call failed)"
    ]
    assert lines[-1] == "settling a run went through: the database is back"


async def test_any_other_error_is_raised_at_once():
    calls = 0

    async def broken() -> None:
        nonlocal calls
        calls += 1
        raise ValueError("a bug, not an outage")

    with pytest.raises(ValueError, match="a bug"):
        await outlast_outage(broken, what="x")
    assert calls == 1


async def test_cancelling_the_caller_ends_the_wait():
    tries = asyncio.Event()

    async def away() -> None:
        tries.set()
        raise ConnectionResetError("reset")

    task = asyncio.create_task(outlast_outage(away, what="x"))
    await tries.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_past_its_bound_the_wait_gives_up_with_an_unreachable_error():
    calls = 0

    async def away() -> None:
        nonlocal calls
        calls += 1
        raise ConnectionRefusedError(111, "refused")

    with pytest.raises(OutageOutlasted) as raised:
        await outlast_outage(away, what="writing a checkpoint", within_s=0.01)
    assert calls >= 2  # it did wait and try again
    assert "writing a checkpoint: the database was unreachable" in str(raised.value)
    # Whoever catches it still sees the database's absence (a run names it so).
    assert is_database_unreachable(raised.value)


async def test_the_count_holds_each_caller_while_it_waits_and_no_longer():
    waits = OutageWaits()
    changes: list[int] = []
    waits.listeners.append(changes.append)
    failing = asyncio.Event()
    back = asyncio.Event()

    async def settle() -> str:
        if not back.is_set():
            failing.set()
            raise ConnectionResetError("reset")
        return "settled"

    async def quick() -> str:
        return "at once"

    assert await outlast_outage(quick, what="x", waits=waits) == "at once"
    assert waits.count == 0 and changes == []  # never waited: never counted
    task = asyncio.create_task(outlast_outage(settle, what="settling a run", waits=waits))
    await failing.wait()
    assert waits.count == 1
    back.set()
    assert await task == "settled"
    assert waits.count == 0 and changes == [1, -1]
    # Cancelled while waiting (shutdown): no longer counted either.
    back.clear()
    failing.clear()
    task = asyncio.create_task(outlast_outage(settle, what="settling a run", waits=waits))
    await failing.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert waits.count == 0


def test_a_loop_logs_a_bug_with_its_traceback_and_an_outage_once(caplog):
    report = OutageLog(logging.getLogger("pronghorn.test"), "sweeping")
    with caplog.at_level(logging.INFO, logger="pronghorn.test"):
        for _ in range(5):
            report.failed(ConnectionRefusedError("refused"))
        report.ok()
        report.ok()  # nothing more: it was already back
        report.failed(KeyError("bug"))
    got = [(r.levelname, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert got == [
        ("WARNING", "sweeping waits: the database is unreachable (refused)", False),
        ("INFO", "sweeping went through: the database is back", False),
        ("ERROR", "sweeping failed", True),
    ]
