"""The EventBroker contract (runtime/events/broker.py), one suite for every implementation.

Each implementation is a factory in ``FACTORIES``: given the real ``SqlEventStore`` on a
migrated SQLite database and the cache limits, it yields a started broker and closes it
afterwards. The scale-out issue adds its Redis broker to that list and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

import pytest

from pronghorn.persistence.db import Database
from pronghorn.runtime.events.broker import Event, EventBroker, EventStore
from pronghorn.runtime.events.event_store import SqlEventStore
from pronghorn.runtime.events.memory_broker import MemoryBroker
from support.redis_kit import redis_broker
from support.run_rows import new_run, sqlite_db


@dataclass(frozen=True)
class Limits:
    run_bytes: int = 1 << 20
    total_bytes: int = 1 << 24


BrokerFactory = Callable[[EventStore, Limits], AbstractAsyncContextManager[EventBroker]]


@contextlib.asynccontextmanager
async def memory_broker(store: EventStore, limits: Limits) -> AsyncIterator[EventBroker]:
    broker = MemoryBroker(
        store=store,
        run_retention_bytes=limits.run_bytes,
        total_retention_bytes=limits.total_bytes,
    )
    await broker.start()
    try:
        yield broker
    finally:
        await broker.aclose()


FACTORIES = [pytest.param(memory_broker, id="memory"), pytest.param(redis_broker, id="redis")]


@pytest.fixture(params=FACTORIES)
def make_broker(request: pytest.FixtureRequest) -> BrokerFactory:
    return request.param


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    async with sqlite_db(tmp_path) as database:
        yield database


@pytest.fixture
def store(db: Database) -> SqlEventStore:
    return SqlEventStore(db)


def payload(i: int, size: int = 10) -> bytes:
    return b'{"i":%d,"pad":"%s"}' % (i, b"x" * size)


async def read_all(broker: EventBroker, run_id: str, after: int | None) -> list[Event]:
    return [ev async for ev in broker.subscribe(run_id, after)]


async def test_ids_are_strictly_increasing_and_events_come_back_in_order(
    make_broker: BrokerFactory, store: SqlEventStore, db: Database
) -> None:
    tid, rid = await new_run(db)
    async with make_broker(store, Limits()) as broker:
        await broker.open_run(rid, tid)
        await broker.open_run(rid, tid)  # idempotent
        ids = [await broker.publish(rid, "values", payload(i)) for i in range(5)]
        assert ids == [1, 2, 3, 4, 5]
        await broker.close_run(rid)
        got = await read_all(broker, rid, 0)
    assert [ev.id for ev in got] == ids
    assert [ev.data for ev in got] == [payload(i) for i in range(5)]
    assert {ev.event for ev in got} == {"values"}


async def test_replay_after_an_id_then_live_until_closed(
    make_broker: BrokerFactory, store: SqlEventStore, db: Database
) -> None:
    tid, rid = await new_run(db)
    async with make_broker(store, Limits()) as broker:
        await broker.open_run(rid, tid)
        for i in range(3):
            await broker.publish(rid, "updates", payload(i))
        reader = broker.subscribe(rid, 1)
        first = [await anext(reader), await anext(reader)]
        assert [ev.id for ev in first] == [2, 3]
        pending = asyncio.ensure_future(anext(reader))
        await broker.publish(rid, "updates", payload(3))
        assert (await pending).id == 4  # a live event reaches a waiting subscriber
        await broker.close_run(rid)
        assert [ev async for ev in reader] == []  # the close ends it


async def test_after_none_means_only_new_events(
    make_broker: BrokerFactory, store: SqlEventStore, db: Database
) -> None:
    tid, rid = await new_run(db)
    async with make_broker(store, Limits()) as broker:
        await broker.open_run(rid, tid)
        await broker.publish(rid, "values", payload(0))
        reader = broker.subscribe(rid, None)
        pending = asyncio.ensure_future(anext(reader))
        await broker.publish(rid, "values", payload(1))
        assert (await pending).id == 2
        await broker.close_run(rid)
        assert await read_all(broker, rid, None) == []  # a finished run: nothing new
        assert [ev.id for ev in await read_all(broker, rid, 0)] == [1, 2]


async def test_flush_stores_everything_published_so_far(
    make_broker: BrokerFactory, store: SqlEventStore, db: Database
) -> None:
    tid, rid = await new_run(db)
    async with make_broker(store, Limits()) as broker:
        await broker.open_run(rid, tid)
        for i in range(7):
            await broker.publish(rid, "values", payload(i))
        await broker.flush(rid)
        assert await store.last_id(rid) == 7
        stored = await store.read(rid, 0, 100)
        assert [ev.data for ev in stored] == [payload(i) for i in range(7)]


async def test_retention_bounds_the_cache_never_what_is_kept(
    make_broker: BrokerFactory, store: SqlEventStore, db: Database
) -> None:
    tid, rid = await new_run(db)
    n = 300
    async with make_broker(store, Limits(run_bytes=256, total_bytes=1024)) as broker:
        await broker.open_run(rid, tid)
        for i in range(n):
            await broker.publish(rid, "messages", payload(i, size=40))
        await broker.flush(rid)
        for after in (0, 1, 57, 150, n - 1, n):  # mid-run: gap from the store, then cache
            reader = broker.subscribe(rid, after)
            got = [await anext(reader) for _ in range(n - after)]
            assert [ev.id for ev in got] == list(range(after + 1, n + 1)), after
            assert isinstance(reader, AsyncGenerator)  # the brokers' readers are generators
            await reader.aclose()
        await broker.close_run(rid)
        for after in (0, 99, n):  # after the end
            got = await read_all(broker, rid, after)
            assert [ev.id for ev in got] == list(range(after + 1, n + 1)), after
    assert await store.last_id(rid) == n


async def test_a_resumed_run_continues_its_ids_after_the_stored_ones(
    make_broker: BrokerFactory, store: SqlEventStore, db: Database
) -> None:
    tid, rid = await new_run(db)
    async with make_broker(store, Limits()) as broker:
        await broker.open_run(rid, tid)
        for i in range(4):
            await broker.publish(rid, "values", payload(i))
        await broker.flush(rid)
    async with make_broker(store, Limits()) as again:  # another process after a restart
        await again.open_run(rid, tid, resume=True)
        assert await again.publish(rid, "values", payload(4)) == 5
        await again.close_run(rid)
        got = await read_all(again, rid, 2)
    assert [ev.id for ev in got] == [3, 4, 5]


async def test_close_stores_what_is_pending(
    make_broker: BrokerFactory, store: SqlEventStore, db: Database
) -> None:
    tid, rid = await new_run(db)
    async with make_broker(store, Limits()) as broker:
        await broker.open_run(rid, tid)
        for i in range(3):
            await broker.publish(rid, "values", payload(i))
    assert await store.last_id(rid) == 3


async def test_thread_log_sees_run_and_thread_events_and_ends_when_dropped(
    make_broker: BrokerFactory, store: SqlEventStore, db: Database
) -> None:
    tid, rid = await new_run(db)
    async with make_broker(store, Limits()) as broker:
        await broker.open_run(rid, tid)
        follower = broker.subscribe_thread(tid, 0)  # from the thread log's start
        pending = asyncio.ensure_future(anext(follower))
        await broker.publish(rid, "values", payload(0))
        first = await pending
        assert (first.event, first.data) == ("values", payload(0))
        tid_id = await broker.publish_thread(tid, "metadata", b'{"status":"run_done"}')
        second = await anext(follower)
        assert second.id == tid_id > first.id and second.event == "metadata"
        await broker.close_run(rid)
        replay = broker.subscribe_thread(tid, first.id - 1)
        assert [(await anext(replay)).id, (await anext(replay)).id] == [first.id, second.id]
        assert isinstance(replay, AsyncGenerator)
        await replay.aclose()
        tail = asyncio.ensure_future(anext(follower))
        await broker.drop_thread(tid)
        with pytest.raises(StopAsyncIteration):
            await tail


async def test_ping(make_broker: BrokerFactory, store: SqlEventStore) -> None:
    async with make_broker(store, Limits()) as broker:
        assert await broker.ping() is True
