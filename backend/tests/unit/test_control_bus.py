"""The control bus (runtime/engine/control.py): messages, the in-process bus, and the Redis one
(a listener per replica id; `send` says whether anybody got it)."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from pronghorn.runtime.cluster.redis_control import RedisControlBus
from pronghorn.runtime.engine.control import ControlMessage, ControlUnavailable, LocalControlBus
from support.redis_kit import REDIS_URL, new_prefix, require_redis


def test_messages_round_trip_and_junk_is_refused() -> None:
    msg = ControlMessage("cancel", "r1", "rollback")
    assert ControlMessage.decode(msg.encode()) == msg
    work = ControlMessage("work", "", sender="replica-a")
    assert ControlMessage.decode(work.encode()) == work  # a replica tells its own apart
    junk_sender = b'{"k":"work","r":"","a":"interrupt","s":7}'
    for junk in (b"", b"[]", b'{"k":"other","r":"x","a":"y"}', b'{"k":"cancel","r":1}'):
        assert ControlMessage.decode(junk) is None
    assert ControlMessage.decode(junk_sender) is None


async def test_local_bus_delivers_to_its_listener_only() -> None:
    bus = LocalControlBus()
    got: list[ControlMessage] = []
    await bus.listen("me", got.append)
    assert await bus.send("me", ControlMessage("cancel", "r1")) is True
    assert await bus.send("someone-else", ControlMessage("cancel", "r2")) is False
    assert (await bus.alive("me"), await bus.alive("someone-else")) == (True, False)
    assert [m.run_id for m in got] == ["r1"]
    await bus.aclose()
    assert await bus.alive("me") is False


async def test_redis_bus_reaches_the_listening_replica() -> None:
    require_redis()
    prefix = new_prefix()
    client_a, client_b = Redis.from_url(REDIS_URL), Redis.from_url(REDIS_URL)
    a = RedisControlBus(client_a, prefix=prefix, retry_s=5.0)
    b = RedisControlBus(client_b, prefix=prefix, retry_s=5.0)
    got: asyncio.Queue[ControlMessage] = asyncio.Queue()
    try:
        await a.listen("replica-a", got.put_nowait)
        assert a.listening
        assert await b.alive("replica-a") and not await b.alive("replica-z")
        assert await b.send("replica-a", ControlMessage("cancel", "r1", "interrupt"))
        assert (await got.get()).run_id == "r1"
        assert await b.send("replica-z", ControlMessage("cancel", "r2")) is False
        await client_a.publish(f"{prefix}:ctl:replica-a", b"not json")  # ignored, still alive
        assert await b.send("replica-a", ControlMessage("cancel", "r3"))
        assert (await got.get()).run_id == "r3"
    finally:
        await a.aclose()
        await b.aclose()
        await client_a.aclose()
        await client_b.aclose()
    assert not a.listening


async def test_redis_bus_unreachable_is_a_clear_error() -> None:
    client = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
    bus = RedisControlBus(client, prefix=new_prefix(), retry_s=0.2)
    try:
        with pytest.raises(ControlUnavailable):
            await bus.send("x", ControlMessage("cancel", "r"))
        with pytest.raises(ControlUnavailable):
            await bus.alive("x")
    finally:
        await bus.aclose()
        await client.aclose()
