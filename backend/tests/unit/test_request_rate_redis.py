"""The shared (Redis) token buckets against a real redis-server on a loopback port: one
bucket per user across replicas, refilled on the server's clock, expiring when full."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from pronghorn.auth.request_rate import RedisRateBuckets
from support.live import free_port

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.02)
        client.close()
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_replicas_share_one_bucket(redis_url: str) -> None:
    one, two = RedisRateBuckets.from_url(redis_url), RedisRateBuckets.from_url(redis_url)
    try:
        assert await one.take("alice", rate=0.01, burst=2) is None
        assert await two.take("alice", rate=0.01, burst=2) is None
        wait = await one.take("alice", rate=0.01, burst=2)  # the other replica took one
        assert wait is not None and 90 < wait <= 100
        assert await two.take("bob", rate=0.01, burst=2) is None
        ttl = await one.client.pttl("pronghorn:rate:alice")
        assert 0 < ttl <= 201_000  # gone once it would be full again
    finally:
        await one.aclose()
        await two.aclose()


async def test_refills_at_the_rate(redis_url: str) -> None:
    buckets = RedisRateBuckets.from_url(redis_url)
    try:
        assert await buckets.take("u", rate=1000.0, burst=1) is None
        # 1000 tokens a second: at most a millisecond to wait, then granted again
        wait = await buckets.take("u", rate=1000.0, burst=1)
        assert wait is None or wait <= 0.001
    finally:
        await buckets.aclose()


def test_gateway_limits_through_redis(redis_url: str, start_app) -> None:
    from ops.users_auth import ALICE

    app = start_app(
        auth={"mode": "custom", "custom": "ops.users_auth:auth"},
        broker={"redis_url": redis_url},
        rate_limits={"requests_per_second": 0.001, "burst": 2, "backend": "redis"},
    )
    with app.http() as http:
        search = "/api/langgraph/threads/search"
        codes = [http.post(search, json={}, headers=ALICE).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
    # a second app (another replica) sees alice's empty bucket
    other = start_app(
        auth={"mode": "custom", "custom": "ops.users_auth:auth"},
        broker={"redis_url": redis_url},
        rate_limits={"requests_per_second": 0.001, "burst": 2, "backend": "redis"},
    )
    with other.http() as http:
        limited = http.post("/api/langgraph/threads/search", json={}, headers=ALICE)
        assert limited.status_code == 429
