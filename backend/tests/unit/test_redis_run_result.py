"""A run's result rides on its close marker (runtime/events/redis_broker.py): a follower in
another process learns the end and the output in one Redis read, without asking the
database; a result too large for that, or none, leaves the follower to the database."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from redis.asyncio import Redis

from pronghorn.persistence.db import Database
from pronghorn.runtime.events.event_store import SqlEventStore
from pronghorn.runtime.events.redis_broker import RESULT_MAX_BYTES, RedisBroker, drop_keys
from support.redis_kit import REDIS_URL, new_prefix, require_redis
from support.run_rows import new_run, sqlite_db


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    async with sqlite_db(tmp_path) as database:
        yield database


@pytest.fixture
async def pair(db: Database) -> AsyncIterator[tuple[RedisBroker, RedisBroker]]:
    """Two brokers on one Redis prefix: the executing process's and a follower's."""
    require_redis()
    prefix = new_prefix()
    clients = [Redis.from_url(REDIS_URL), Redis.from_url(REDIS_URL)]
    brokers = [
        RedisBroker(client=c, store=SqlEventStore(db), prefix=prefix, block_s=1.0) for c in clients
    ]
    async with contextlib.AsyncExitStack() as stack:
        for broker in brokers:
            await broker.start()
            stack.push_async_callback(broker.aclose)
        yield brokers[0], brokers[1]
    await drop_keys(clients[0], prefix)
    for client in clients:
        await client.aclose()


async def test_a_follower_elsewhere_gets_the_end_with_the_result(pair, db) -> None:
    executing, follower = pair
    tid, rid = await new_run(db)
    await executing.open_run(rid, tid)
    await executing.publish(rid, "values", b'{"messages":[]}')
    waiting = asyncio.create_task(follower.ended(rid))
    await asyncio.sleep(0)  # (it may start before or after the close: both must work)
    output = {"messages": [{"type": "ai", "content": "echo: hi"}], "n": 1}
    await executing.close_run(rid, output)
    assert orjson.loads(await asyncio.wait_for(waiting, 30)) == output
    # Later followers (the marker on top of the finished run's stream) get it at once.
    assert orjson.loads(await asyncio.wait_for(follower.ended(rid), 30)) == output


async def test_a_large_result_or_none_leaves_the_follower_to_the_database(pair, db) -> None:
    executing, follower = pair
    big = {"text": "x" * RESULT_MAX_BYTES}
    for result in (big, None):
        tid, rid = await new_run(db)
        await executing.open_run(rid, tid)
        await executing.publish(rid, "values", b"{}")
        await executing.close_run(rid, result)
        assert await asyncio.wait_for(follower.ended(rid), 30) is None
