"""`outlast_outage` and `OutageLog`: what waits through a database outage, and what it logs."""

from __future__ import annotations

import asyncio
import logging

import pytest

from pronghorn.persistence import outage
from pronghorn.persistence.outage import OutageLog, outlast_outage


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
