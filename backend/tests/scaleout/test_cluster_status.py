"""`GET /api/config/status` as a cluster view for admins: every live replica's card (id,
host, pid, config version, started / last seen, runs active), from any replica; a replica
that stops or dies drops off; one process shows a one-element list."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

from redis.asyncio import Redis

from ops.users_auth import ALICE
from pronghorn.runtime.cluster.replicas import RedisReplicas, ReplicaCard, now_iso
from scaleout.sse_kit import chatty, wait_status
from support.redis_kit import REDIS_URL

API = "/api/langgraph"


def _status(client) -> dict:
    resp = client.get("/api/config/status")
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_each_replica_lists_every_replica(replica, tmp_path: Path):
    a, b = replica(), replica()
    gate = tmp_path / "gate"
    with a.http() as ca, b.http() as cb:
        sa, sb = _status(ca), _status(cb)
        assert sa["replica_id"] != sb["replica_id"]
        assert sa["replicas_complete"] is True and sb["replicas_complete"] is True
        ids = {sa["replica_id"], sb["replica_id"]}
        for status in (sa, sb):
            cards = status["replicas"]
            assert {c["replica_id"] for c in cards} == ids
            for card in cards:
                assert card["host"] == socket.gethostname() and card["pid"] == os.getpid()
                # same config file content: the same (masked) version hash as the status
                assert card["config_version"] == status["version_hash"]
                assert card["started_at"] <= card["last_seen"]
                assert card["runs_active"] == 0
        # A run held on A: A's card (refreshed by any status read on A) says so, on B too.
        tid = ca.post(f"{API}/threads", json={}).json()["thread_id"]
        rid = ca.post(
            f"{API}/threads/{tid}/runs", json={"assistant_id": "chatty", "input": chatty(gate)}
        ).json()["run_id"]
        wait_status(ca, tid, rid, {"running"})
        on_a = {c["replica_id"]: c for c in _status(ca)["replicas"]}
        on_b = {c["replica_id"]: c for c in _status(cb)["replicas"]}
        assert on_a[sa["replica_id"]]["runs_active"] == 1
        assert on_b[sa["replica_id"]]["runs_active"] == 1
        assert on_b[sb["replica_id"]]["runs_active"] == 0
        gate.write_text("go")
        assert wait_status(ca, tid, rid, {"success"})["status"] == "success"
    b.stop()  # a graceful stop withdraws B's card at once
    with a.http() as ca:
        cards = _status(ca)["replicas"]
    assert [c["replica_id"] for c in cards] == [sa["replica_id"]]


def test_a_dead_replicas_card_expires(prefix: str):
    async def scenario() -> None:
        client = Redis.from_url(REDIS_URL)
        try:
            directory = RedisReplicas(client, prefix=prefix, ttl_s=0.3)
            stamp = now_iso()
            for name in ("r1", "r2"):
                card = ReplicaCard(
                    replica_id=name,
                    host="h",
                    pid=1,
                    config_version="v",
                    started_at=stamp,
                    last_seen=stamp,
                    runs_active=0,
                )
                await directory.publish(card)
            assert [c.replica_id for c in await directory.cards()] == ["r1", "r2"]
            # r2 keeps publishing, r1 "died": its card expires and its id is forgotten.
            deadline = time.monotonic() + 30
            while True:
                await directory.publish(card)
                left = [c.replica_id for c in await directory.cards()]
                if left == ["r2"]:
                    break
                assert time.monotonic() < deadline, left
                await asyncio.sleep(0.05)
            members = await client.smembers(f"{prefix}:replicas")  # type: ignore[misc]
            assert members == {b"r2"}
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_one_process_is_a_one_element_list_and_only_admins_see_it(start_app):
    app = start_app(auth={"mode": "custom", "custom": "ops.users_auth:auth"})
    with app.http() as http:
        alice = http.get("/api/config/status", headers=ALICE)
        assert alice.status_code == 200 and "replicas" not in alice.json()
    single = start_app()  # auth.mode none: the local user is an admin
    with single.http() as http:
        status = _status(http)
    assert [c["replica_id"] for c in status["replicas"]] == [status["replica_id"]]
    assert status["replicas"][0]["pid"] == os.getpid()
    assert status["replicas_complete"] is True
