"""Crons through the SDK, and the claim that makes each due time fire once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from support.live import LiveServer


@pytest.fixture
def client(server: LiveServer):
    return get_client(url=server.api)


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


async def test_cron_fires_on_its_thread(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    cron = await client.crons.create_for_thread(
        tid,
        "echo",
        schedule="* * * * * *",  # every second
        input={"messages": [{"role": "user", "content": "tick"}]},
    )
    runs: list = []
    for _ in range(100):
        runs = await client.runs.list(tid)
        if len(runs) >= 2:
            break
        await asyncio.sleep(0.1)
    await client.crons.delete(cron["cron_id"])
    assert len(runs) >= 2
    created = sorted(r["created_at"] for r in runs)
    assert len(set(c[:19] for c in created)) == len(created)  # one run per second at most
    assert all(r["metadata"]["cron_id"] == cron["cron_id"] for r in runs)
    out = await client.runs.join(tid, runs[0]["run_id"])
    assert out["last_echo"] == "tick"


async def test_end_time_stops_it(client):
    end = datetime.now(UTC) + timedelta(seconds=1.5)
    cron = await client.crons.create(
        "echo", schedule="* * * * * *", end_time=end, input={"messages": []}
    )
    await asyncio.sleep(3)
    got = await client.crons.search(assistant_id="echo")
    mine = next(c for c in got if c["cron_id"] == cron["cron_id"])
    assert mine["next_run_date"] is None
