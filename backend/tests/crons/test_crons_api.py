"""Crons through the SDK, and the claim that makes each due time fire once."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from support.inproc import InProcessServer


@pytest.fixture
def client(server: InProcessServer):
    return server.sdk()


async def test_crud_search_count(client):
    t = await client.threads.create()
    c1 = await client.crons.create_for_thread(
        t["thread_id"], "echo", schedule="0 3 * * *", input={"messages": []}, metadata={"k": "a"}
    )
    assert c1["thread_id"] == t["thread_id"] and c1["schedule"] == "0 3 * * *"
    assert c1["next_run_date"].endswith("+00:00") or c1["next_run_date"].endswith("Z")
    assert c1["payload"]["input"] == {"messages": []}
    c2 = await client.crons.create(
        "echo", schedule="*/5 * * * *", timezone="Europe/Paris", metadata={"k": "b"}
    )
    assert c2["thread_id"] is None and c2["on_run_completed"] == "delete"
    found = await client.crons.search(metadata={"k": "b"})
    assert [c["cron_id"] for c in found] == [c2["cron_id"]]
    assert await client.crons.count(metadata={"k": "a"}) == 1
    assert len(await client.crons.search(thread_id=t["thread_id"])) == 1
    updated = await client.crons.update(c2["cron_id"], schedule="0 0 * * *", enabled=False)
    assert updated["schedule"] == "0 0 * * *" and updated["enabled"] is False
    await client.crons.delete(c1["cron_id"])
    with pytest.raises(NotFoundError):
        await client.crons.delete(c1["cron_id"])
    with pytest.raises(UnprocessableEntityError):
        await client.crons.create("echo", schedule="not a schedule")
    with pytest.raises(UnprocessableEntityError):
        await client.crons.create("echo", schedule="* * * * *", timezone="Mars/Olympus")
    with pytest.raises(NotFoundError):
        await client.crons.create("nope", schedule="* * * * *")


def _make_due(server: InProcessServer, cron_id: str, *, end_time: datetime | None = None) -> None:
    """Schedules are 5-field (minute granularity): instead of waiting for the next minute,
    move the cron's next due time into the past in the server's own SQLite database (in the
    format SQLAlchemy writes), as a due time that was reached."""

    def fmt(value: datetime) -> str:
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")

    due = datetime.now(UTC) - timedelta(seconds=2)
    with sqlite3.connect(server.workdir / "data" / "pronghorn.db", timeout=30) as db:
        db.execute("UPDATE crons SET next_run_date = ? WHERE cron_id = ?", (fmt(due), cron_id))
        if end_time is not None:
            db.execute("UPDATE crons SET end_time = ? WHERE cron_id = ?", (fmt(end_time), cron_id))


async def _wait_for(check, within_s: float = 30.0):
    deadline = asyncio.get_running_loop().time() + within_s
    while True:
        result = await check()
        if result or asyncio.get_running_loop().time() > deadline:
            return result
        await asyncio.sleep(0.1)


async def test_cron_fires_on_its_thread(client, server: InProcessServer):
    t = await client.threads.create()
    tid = t["thread_id"]
    cron = await client.crons.create_for_thread(
        tid, "echo", schedule="* * * * *", input={"messages": [{"role": "user", "content": "tick"}]}
    )
    _make_due(server, cron["cron_id"])
    runs = await _wait_for(lambda: client.runs.list(tid))
    assert len(runs) == 1  # the due time fired once
    assert runs[0]["metadata"]["cron_id"] == cron["cron_id"]
    out = await client.runs.join(tid, runs[0]["run_id"])
    assert out["last_echo"] == "tick"
    after = await client.crons.search(thread_id=tid)
    nxt = datetime.fromisoformat(after[0]["next_run_date"])
    assert nxt > datetime.now(UTC) - timedelta(seconds=5) and nxt.second == 0  # next minute
    await client.crons.delete(cron["cron_id"])
    assert len(await client.runs.list(tid)) == 1


async def test_end_time_stops_it(client, server: InProcessServer):
    t = await client.threads.create()
    tid = t["thread_id"]
    end = datetime.now(UTC) + timedelta(hours=1)
    cron = await client.crons.create_for_thread(
        tid, "echo", schedule="* * * * *", end_time=end, input={"messages": []}
    )
    assert cron["next_run_date"] is not None
    # due 2 s ago, ending 1 s ago: it fires that last time, then has no next run
    _make_due(server, cron["cron_id"], end_time=datetime.now(UTC) - timedelta(seconds=1))

    async def stopped():
        got = await client.crons.search(thread_id=tid)
        return got and got[0]["next_run_date"] is None

    assert await _wait_for(stopped)
    assert len(await client.runs.list(tid)) == 1
    await client.crons.delete(cron["cron_id"])
