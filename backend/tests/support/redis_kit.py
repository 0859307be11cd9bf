"""Redis for tests: where it is (PRONGHORN_TEST_REDIS_URL, default the local one), a skip
with a clear message when none answers, a random key prefix per test (removed afterwards),
and the broker factory of the conformance suite.

A TCP proxy in front of Redis (``RedisProxy``) lets a test take Redis away from a gateway
and give it back without touching the real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
import weakref
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from redis.asyncio import Redis

from pronghorn.runtime.events.broker import EventBroker, EventStore
from pronghorn.runtime.events.redis_broker import RedisBroker, drop_keys

REDIS_URL = os.environ.get("PRONGHORN_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
_reachable: list[bool] = []


def redis_reachable() -> bool:
    """Whether a Redis answers PING at REDIS_URL (asked once per test process)."""
    if not _reachable:
        where = urlsplit(REDIS_URL)
        try:
            with socket.create_connection((where.hostname, where.port or 6379), timeout=1) as s:
                s.sendall(b"PING\r\n")
                _reachable.append(s.recv(16).startswith(b"+PONG"))
        except OSError:
            _reachable.append(False)
    return _reachable[0]


def require_redis() -> None:
    if not redis_reachable():
        pytest.skip(f"no Redis answers at {REDIS_URL} (set PRONGHORN_TEST_REDIS_URL)")


def new_prefix() -> str:
    return f"pgtest:{uuid.uuid4().hex[:12]}"


async def drop_prefix(prefix: str) -> None:
    client = Redis.from_url(REDIS_URL)
    try:
        await drop_keys(client, prefix)
    finally:
        await client.aclose()


# One prefix per event store, so the brokers of one test (say, before and after a
# "restart") share their keys and no two tests ever do.
_prefixes: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def redis_broker(store: EventStore, limits: Any) -> AsyncIterator[EventBroker]:
    """The conformance suite's factory: ~64 bytes an event turns its byte limits into the
    Redis broker's event counts (small enough to exercise trimming)."""
    require_redis()
    prefix = _prefixes.setdefault(store, new_prefix())
    client = Redis.from_url(REDIS_URL)
    broker = RedisBroker(
        client=client,
        store=store,
        prefix=prefix,
        run_cache_events=max(1, limits.run_bytes // 64),
        thread_cache_events=max(1, limits.total_bytes // 64),
        block_s=1.0,
    )
    await broker.start()
    try:
        yield broker
    finally:
        await broker.aclose()
        await drop_keys(client, prefix)
        await client.aclose()


class RedisProxy:
    """A TCP proxy on loopback in front of Redis: ``stop()`` drops every connection and
    refuses new ones (Redis "goes away"), ``start()`` listens again on the same port."""

    def __init__(self, target: str = REDIS_URL) -> None:
        where = urlsplit(target)
        self.target = (where.hostname or "127.0.0.1", where.port or 6379)
        self.db = where.path or "/0"
        self.port = 0
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}{self.db}"

    def connections(self) -> int:
        """Connections held, both sides counted: a client's, and its upstream one once dialed."""
        return len(self._writers)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accepted, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        # A connection the listener took just before it closed is still being set up: its
        # transport is made in one turn of the loop and handed to `_accepted` (which refuses
        # it now) in the next, then closed in the third.
        for _ in range(3):
            await asyncio.sleep(0)
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._pipes):
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Called as the connection is made, before any await: it is held from this moment, so
        `stop()` drops it whatever it is doing (it used to be tracked only once Redis was
        dialed: a stop in between left it proxying, and its transport outlived the proxy's
        loop, a ResourceWarning in whatever test ran at the next GC)."""
        if self._server is None:  # made as the proxy stopped
            writer.transport.abort()
            return
        self._writers.add(writer)
        self._pipes.add(asyncio.get_running_loop().create_task(self._serve(reader, writer)))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.target)
            except OSError:
                return
            self._writers.add(up_writer)
            pipes = [
                asyncio.create_task(self._copy(reader, up_writer)),
                asyncio.create_task(self._copy(up_reader, writer)),
            ]
            self._pipes.update(pipes)
            try:
                await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in pipes:
                    task.cancel()
                await asyncio.gather(*pipes, return_exceptions=True)
                up_writer.transport.abort()
                self._writers.discard(up_writer)
                self._pipes.difference_update(pipes)
        finally:
            writer.transport.abort()
            self._writers.discard(writer)
            here = asyncio.current_task()
            if here is not None:
                self._pipes.discard(here)

    @staticmethod
    async def _copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
