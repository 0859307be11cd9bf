"""More live streams on one replica than redis-py's default pool holds (100): each live
tail blocks in XREAD on a connection of its own, and none is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scaleout.sse_kit import chatty, wait_status

API = "/api/langgraph"
STREAMS = 120


def test_more_streams_than_the_default_redis_pool(replica, tmp_path: Path):
    app = replica()
    gate = tmp_path / "gate"
    with app.http() as client:
        tid = client.post(f"{API}/threads", json={}).json()["thread_id"]
        rid = client.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "chatty", "input": chatty(gate), "stream_mode": ["custom"]},
        ).json()["run_id"]
        wait_status(client, tid, rid, {"running"})

    url = f"{API}/threads/{tid}/runs/{rid}/stream"

    async def scenario() -> list[bytes]:
        async with app.ahttp(timeout=120) as http:
            live = 0
            all_live = asyncio.Event()

            async def follow() -> bytes:
                nonlocal live
                data = b""
                counted = False
                async with http.stream("GET", url, headers={"Last-Event-ID": "-1"}) as resp:
                    assert resp.status_code == 200, await resp.aread()
                    async for chunk in resp.aiter_raw():
                        data += chunk
                        # the metadata event + 3 custom ones: now tailing live in Redis
                        if not counted and data.count(b"\r\n\r\nevent: ") + 1 >= 4:
                            counted = True
                            live += 1
                            if live == STREAMS:
                                all_live.set()
                return data

            tasks = [asyncio.create_task(follow()) for _ in range(STREAMS)]
            waiter = asyncio.create_task(all_live.wait())
            done, _ = await asyncio.wait(
                [waiter, *tasks], timeout=90, return_when=asyncio.FIRST_COMPLETED
            )
            for task in done - {waiter}:
                task.result()  # a stream that ended early: its error
            assert waiter in done, f"only {live} of {STREAMS} streams went live"
            await asyncio.to_thread(gate.write_text, "go")
            return await asyncio.gather(*tasks)

    bodies = asyncio.run(scenario())
    assert len(bodies) == STREAMS
    for body in bodies:
        assert b"event: error" not in body
        assert body.count(b"event: custom") == 6
