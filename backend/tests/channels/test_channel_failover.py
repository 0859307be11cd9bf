"""One receiver per channel across replicas: two gateways in this process share one
database (and, for the Redis lease, one Redis); the fake Telegram answers a second poller
with 409 Conflict, as Telegram does. Only the lease holder polls; the other reports
`standby`; when the holder stops, the other takes over and answers the next message."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.kit import scripted_config, serving, telegram_section
from channels.kit import until as _until
from fakes.telegram_server import FakeTelegram
from persistence.conftest import db  # noqa: F401  (fixture)
from pronghorn.channels.lease import Lease, RedisLease
from pronghorn.persistence.db import Database
from pronghorn.runtime.cluster.channel_lease import SqlLease
from scaleout.conftest import MUTED, ThreadedProxy, prefix, redis_proxy, shared_db  # noqa: F401
from support.inproc import InProcessServer
from support.redis_kit import REDIS_URL

pytestmark = pytest.mark.filterwarnings(MUTED)

TTL_S = 3.0  # short enough to wait out; its thirds (the tries) still far above a poll


@pytest.fixture
def fake() -> Iterator[FakeTelegram]:
    yield from serving(FakeTelegram())


@pytest.fixture(params=["redis", "sql"])
def replicas(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    shared_db: dict[str, Any],  # noqa: F811
    fake: FakeTelegram,
) -> Iterator[Callable[..., InProcessServer]]:
    """`replicas()` starts one more gateway on the shared database with the Telegram bot
    (`replicas(redis_url=...)`: reaching Redis there)."""
    broker: dict[str, Any] = {"kind": "memory"}
    if request.param == "redis":
        broker = {
            "kind": "redis",
            "redis_url": REDIS_URL,
            "key_prefix": request.getfixturevalue("prefix"),
        }
    apps: list[InProcessServer] = []

    def start(redis_url: str | None = None) -> InProcessServer:
        cfg = scripted_config(
            [{"steps": [{"text": "Hi from a replica."}]}],
            database=shared_db,
            broker={**broker, "redis_url": redis_url} if redis_url else broker,
            channels={
                "access": {"mode": "open"},
                "lease_ttl_s": TTL_S,
                "telegram": telegram_section(fake, poll_timeout_s=1),
            },
        )
        app = InProcessServer(tmp_path / f"replica{len(apps)}", cfg)
        apps.append(app)
        return app.start(timeout=120)

    yield start
    for app in apps:
        app.stop()


def _telegram(srv: InProcessServer) -> dict[str, Any]:
    with srv.http() as http:
        (tg,) = http.get("/api/channels").json()
    return tg


def _answered(fake: FakeTelegram, chat: int) -> None:
    def done() -> bool:
        return any(
            c.body.get("text") == "Hi from a replica."
            for c in fake.calls
            if c.method in ("sendMessage", "editMessageText") and int(c.body["chat_id"]) == chat
        )

    fake.wait_for(done)


def test_one_replica_polls_and_the_other_takes_over(
    replicas: Callable[..., InProcessServer], fake: FakeTelegram
):
    a, b = replicas(), replicas()

    def roles() -> tuple[InProcessServer, InProcessServer] | None:
        sa, sb = _telegram(a), _telegram(b)
        if sa["running"] and sb["standby"] and not sb["running"]:
            return a, b
        if sb["running"] and sa["standby"] and not sa["running"]:
            return b, a
        return None

    holder, standby = _until(roles)
    assert _telegram(holder)["standby"] is False
    polls = len(fake.of("getUpdates"))
    fake.wait_for(lambda: len(fake.of("getUpdates")) >= polls + 3)
    assert fake.conflicts == 0  # never two pollers at once
    assert _telegram(standby)["starts"] == 0
    with standby.http() as http:  # the standby asks getMe itself for the deep link
        code = http.post("/api/channels/telegram/connect").json()
    assert code["deep_link"] == f"https://t.me/pronghorn_bot?start={code['code']}"

    fake.user_message("hello", user_id=501)
    _answered(fake, 501)
    assert sum(1 for c in fake.of("sendMessage") if int(c.body["chat_id"]) == 501) == 1

    stopped_at = time.monotonic()
    holder.stop()
    _until(lambda: _telegram(standby)["running"])
    took = time.monotonic() - stopped_at
    assert took < TTL_S, took  # a clean stop hands over at the next try (ttl/3)
    assert _telegram(standby)["standby"] is False
    fake.user_message("hello again", user_id=502)
    _answered(fake, 502)


@pytest.mark.parametrize("replicas", ["redis"], indirect=True)
def test_a_holder_cut_off_from_the_lease_store_is_replaced(
    replicas: Callable[..., InProcessServer],
    fake: FakeTelegram,
    redis_proxy: ThreadedProxy,  # noqa: F811
):
    """The holder loses Redis (it can neither renew nor release, as if it had died): its
    lease expires, it stops its receiver after a whole ttl without renewal, and the other
    replica takes over and answers."""
    holder = replicas(redis_url=redis_proxy.url)
    _until(lambda: _telegram(holder)["running"])
    other = replicas()
    _until(lambda: _telegram(other)["standby"])
    cut_at = time.monotonic()
    redis_proxy.stop()
    try:
        _until(lambda: _telegram(other)["running"])
        took = time.monotonic() - cut_at
        assert took < TTL_S * 2.5, took  # expiry (ttl) plus one try (ttl/3), with slack
        _until(lambda: not _telegram(holder)["running"])  # it stopped polling by itself
        fake.user_message("hello", user_id=601)
        _answered(fake, 601)
    finally:
        redis_proxy.start()


# -- the leases alone: renewal, expiry after a crash, release --------------------------------


# A hold that must not lapse while the test runs (no stall of a loaded machine outlasts it),
# and one that is meant to lapse. With one short TTL for every step, a pause of 0.6 s between
# two takes let the first hold lapse and the second holder take it (seen in CI).
HOLD_S = 30.0
LAPSE_S = 0.3


async def _exercise(first: Lease, second: Lease) -> None:
    assert await first.take("telegram", HOLD_S)
    assert not await second.take("telegram", HOLD_S)
    assert await first.take("telegram", LAPSE_S)  # renewed by its holder, now to lapse
    assert await second.take("slack", HOLD_S)  # another channel is another lease
    # the holder "crashes" (never renews, never releases): the lease expires
    deadline = time.monotonic() + 10
    while not await second.take("telegram", HOLD_S):
        assert time.monotonic() < deadline, "the lease never expired"
        await asyncio.sleep(0.05)
    assert not await first.take("telegram", HOLD_S)  # it lost it
    await first.give_up("telegram")  # not its own any more: nothing happens
    assert not await first.take("telegram", HOLD_S)
    await second.give_up("telegram")
    assert await first.take("telegram", HOLD_S)  # released: free at once


async def test_sql_lease(db: Database):  # noqa: F811  (SQLite, and PostgreSQL when set)
    await _exercise(SqlLease(db, "holder-a"), SqlLease(db, "holder-b"))


async def test_redis_lease(prefix: str):  # noqa: F811
    from redis.asyncio import Redis

    client = Redis.from_url(REDIS_URL)
    try:
        await _exercise(
            RedisLease(client, prefix, "holder-a"), RedisLease(client, prefix, "holder-b")
        )
    finally:
        await client.aclose()
