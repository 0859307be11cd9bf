"""Every stream asks the Redis broker for a ping before it starts (503 when Redis is away):
a burst of streams shares one ping instead of opening a connection each at once, which on
a busy host timed the connects out and refused streams while Redis was there."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.asyncio import Redis

from pronghorn.runtime.events.event_store import SqlEventStore
from pronghorn.runtime.events.redis_broker import RedisBroker
from support.redis_kit import REDIS_URL, new_prefix, require_redis
from support.run_rows import sqlite_db


async def test_a_burst_of_pings_shares_one_connection(tmp_path: Path) -> None:
    require_redis()
    async with sqlite_db(tmp_path) as db:
        client = Redis.from_url(REDIS_URL)
        broker = RedisBroker(client=client, store=SqlEventStore(db), prefix=new_prefix())
        try:
            answers = await asyncio.gather(*(broker.ping() for _ in range(50)))
            assert answers == [True] * 50
            # one ping was sent, on one connection (each its own: 50 connections)
            assert len(client.connection_pool._available_connections) == 1  # pyright: ignore[reportPrivateUsage]
            assert await broker.ping()  # the next burst pings again
        finally:
            await broker.aclose()
            await client.aclose()


async def test_a_caller_cancelled_leaves_the_shared_ping_to_the_others(tmp_path: Path) -> None:
    require_redis()
    async with sqlite_db(tmp_path) as db:
        client = Redis.from_url(REDIS_URL)
        broker = RedisBroker(client=client, store=SqlEventStore(db), prefix=new_prefix())
        try:
            first = asyncio.create_task(broker.ping())
            second = asyncio.create_task(broker.ping())
            await asyncio.sleep(0)  # both are waiting on the one ping
            first.cancel()
            assert await second is True
        finally:
            await broker.aclose()
            await client.aclose()


async def test_an_accept_asks_redis_only_when_it_has_not_answered_lately(tmp_path: Path) -> None:
    """`answering` (the accept's check): no round trip while Redis answered this process
    within the window (a run's log opened, a pump's batch, a ping); a ping after it, and
    False when Redis does not answer then."""
    require_redis()
    async with sqlite_db(tmp_path) as db:
        client = Redis.from_url(REDIS_URL)
        broker = RedisBroker(
            client=client, store=SqlEventStore(db), prefix=new_prefix(), retry_s=0.2
        )
        pings: list[bool] = []
        real_ping = broker.ping

        async def counted() -> bool:
            answer = await real_ping()
            pings.append(answer)
            return answer

        broker.ping = counted  # pyright: ignore[reportAttributeAccessIssue]
        try:
            assert await broker.answering(0.5)  # nothing heard yet: asks
            assert pings == [True]
            await broker.open_run("r1", "t1")
            await broker.publish("r1", "values", b"{}")
            await broker.close_run("r1")  # the pump's batches answered
            assert await broker.answering(0.5) and await broker.answering(0.5)
            assert pings == [True]
            await asyncio.sleep(0.3)
            assert await broker.answering(0.2)  # too long ago: asks again
            assert pings == [True, True]
            await client.aclose()
            broker.client = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.1)
            broker._ping = None  # pyright: ignore[reportPrivateUsage]
            assert await broker.answering(0.5)  # answered just now: not asked
            await asyncio.sleep(0.3)
            assert not await broker.answering(0.2)  # asked, and Redis does not answer
            assert pings == [True, True, False]
        finally:
            await broker.aclose()
            await broker.client.aclose()


async def test_the_pump_reloads_its_scripts_when_redis_lost_them(tmp_path: Path) -> None:
    """A batch of one event goes as a plain EVALSHA (no pipeline): when Redis has lost the
    script (a restart, SCRIPT FLUSH) it is loaded again and the event still arrives."""
    require_redis()
    async with sqlite_db(tmp_path) as db:
        client = Redis.from_url(REDIS_URL)
        broker = RedisBroker(client=client, store=SqlEventStore(db), prefix=new_prefix())
        try:
            await broker.open_run("r1", "t1")
            await broker.publish("r1", "values", b'{"n": 1}')
            await broker.flush("r1")
            await client.script_flush()  # pyright: ignore[reportUnknownMemberType]
            await broker.publish("r1", "values", b'{"n": 2}')
            await broker.close_run("r1")
            seen = [(ev.id, ev.data) async for ev in broker.subscribe("r1", 0)]
            assert seen == [(1, b'{"n": 1}'), (2, b'{"n": 2}')]
        finally:
            await broker.aclose()
            await client.aclose()
