"""`RedisBroker`: the EventBroker (broker.py) on Redis Streams, for several gateway
processes. Keys and scripts: redis_keys.py.

Writing. Only the process executing a run writes its stream, so it numbers the events
itself (the same strictly increasing ids as in-process) and `publish` returns at once: the
event goes to the `EventWriter` (the `run_events` table keeps every event) and to the run's
outbox, which a pump task appends to Redis in order, many events per round trip (one Lua
call per event also appends it to the thread's stream, atomically). While Redis is away
the pump keeps the events and tries again; the run goes on. Readers in other processes see
an event one Redis hop after it was published.

Caching. A run's stream holds at most `run_cache_events` events: once the store has
confirmed events, the oldest of those beyond the bound are trimmed (`XTRIM MINID`, never
past what is stored); a finished run's stream expires `finished_ttl_s` after its close,
an idle one `stream_ttl_s` after its last event. Thread streams are live-only (never
stored), bounded by `thread_cache_events`.

Reading. `subscribe` reads the run's stream from an id with `XREAD BLOCK`; ids the stream
no longer has (trimmed, expired, or lost with a Redis restart) are read from the store. A
reader ends at the close marker, or — the marker never written because the executing
process died or Redis was away — when `run_finished` says the run's row is final (asked
whenever a read waited `block_s` for nothing). A lost connection is retried for `retry_s`;
then the reader raises `BrokerUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from typing import cast

from redis import exceptions as redis_errors
from redis.asyncio import Redis

from pronghorn.runtime.events.broker import BrokerUnavailable, Event, EventStore, T, Unit
from pronghorn.runtime.events.event_writer import FLUSH_INTERVAL_S, FLUSH_ROWS, EventWriter
from pronghorn.runtime.events.redis_keys import (
    APPEND_RUN_EVENT,
    APPEND_THREAD_EVENT,
    CLOSE_RUN,
    CLOSE_SEQ,
    DROP_THREAD,
    MAX_BACKOFF_S,
    OPEN_RUN,
    OPEN_SEQ,
    TRANSIENT,
    Keys,
    entry_id,
    retrying,
)
from pronghorn.runtime.events.serialization import dumps

log = logging.getLogger("pronghorn.broker")

READ_PAGE = 500  # entries per XREAD, and stored events per query
PUMP_BATCH = 256  # events per pipeline
GAP_WAIT_S = 2.0  # how long a reader waits for a gap's events to reach the store
RESULT_MAX_BYTES = 64 * 1024
"""A run's result rides on its close marker up to this size; a larger one is read from
the database by followers (next to moving the body, that read is small)."""

RunFinished = Callable[[str], Awaitable[bool]]
Entry = tuple[bytes, dict[bytes, bytes]]


def _unavailable(exc: BaseException) -> BrokerUnavailable:
    return BrokerUnavailable(f"The event broker (Redis) is unreachable: {exc}")


class _End:
    """How a followed run's log ended: the result its close marker carried (or None)."""

    __slots__ = ("result",)

    def __init__(self) -> None:
        self.result: bytes | None = None


class _Outbox:
    """A run this process executes: its ids, and the events Redis does not have yet."""

    __slots__ = (
        "closed",
        "epoch",
        "fence",
        "idle",
        "last_id",
        "pending",
        "pump",
        "result",
        "run_id",
        "sealed",
        "stored",
        "thread_id",
        "trim_to",
        "trimmed",
        "wake",
    )

    def __init__(
        self, run_id: str, thread_id: str, last_id: int, epoch: int, fence: int | None = None
    ) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self.last_id = last_id
        self.epoch = epoch  # the log's epoch this process opened (redis_keys.py)
        self.fence = fence  # the claim its events are stored under (event_store.py)
        self.stored = last_id
        self.pending: deque[Event] = deque()
        self.trim_to = 0  # XTRIM MINID wanted (entries below it may go)
        self.trimmed = 0
        self.closed = False  # close_run called
        self.result = b""  # what the close marker carries ('': nothing)
        self.sealed = False  # the close marker is in Redis
        self.wake = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()
        self.pump: asyncio.Task[None] | None = None

    def work(self) -> bool:
        return (
            bool(self.pending) or self.trim_to > self.trimmed or (self.closed and not self.sealed)
        )


class RedisBroker:
    def __init__(
        self,
        *,
        client: Redis,
        store: EventStore,
        prefix: str,
        run_cache_events: int = 10_000,
        thread_cache_events: int = 1_000,
        stream_ttl_s: int = 3600,
        finished_ttl_s: int = 60,
        retry_s: float = 5.0,
        block_s: float = 5.0,
        run_finished: RunFinished | None = None,
        flush_interval_s: float = FLUSH_INTERVAL_S,
        flush_rows: int = FLUSH_ROWS,
    ) -> None:
        self.client = client
        self.store = store
        self.keys = Keys(prefix)
        self.run_cache_events = run_cache_events
        self.thread_cache_events = thread_cache_events
        self.stream_ttl_s = stream_ttl_s
        self.finished_ttl_s = finished_ttl_s
        self.retry_s = retry_s
        self.block_ms = max(1, int(block_s * 1000))
        self.run_finished = run_finished
        self.writer = EventWriter(
            store, on_stored=self._stored, interval_s=flush_interval_s, max_rows=flush_rows
        )
        self._boxes: dict[str, _Outbox] = {}
        # The ping in flight, shared by every caller meanwhile (see `ping`).
        self._ping: asyncio.Task[bool] | None = None
        # When Redis last answered a pump's batch, a ping or a log's opening (loop time).
        self._answered_at: float | None = None
        self._append_run = client.register_script(APPEND_RUN_EVENT)
        self._append_thread = client.register_script(APPEND_THREAD_EVENT)
        self._close_run = client.register_script(CLOSE_RUN)
        self._open_run = client.register_script(OPEN_RUN)
        self._drop_thread = client.register_script(DROP_THREAD)

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self) -> None:
        if not await self.ping():
            log.warning("Redis does not answer yet; streams wait for it")

    async def ping(self) -> bool:
        """Whether Redis answers; a lost or slow connection is tried again for up to
        min(retry_s, 2) s, as every other call is (a connect that timed out once on a busy
        host is not an outage). Callers meanwhile share one ping: every stream asks before
        it starts, and a burst of them would otherwise open a connection each at once (on a
        busy host, enough to time the connects out)."""
        task = self._ping
        if task is None or task.done():
            task = self._ping = asyncio.ensure_future(self._ping_once())
        return await asyncio.shield(task)

    async def answering(self, within_s: float) -> bool:
        """Whether Redis answers: yes without asking when it answered this process within
        the last `within_s` (a pump's batch, a ping, a log opened), else `ping`. For a
        request's path, where a ping per request is a round trip per run; `/ready` pings."""
        at = self._answered_at
        if at is not None and asyncio.get_running_loop().time() - at <= within_s:
            return True
        return await self.ping()

    def _answered(self) -> None:
        self._answered_at = asyncio.get_running_loop().time()

    async def _ping_once(self) -> bool:
        async def once() -> bool:
            return bool(await self.client.ping())  # type: ignore[misc]

        try:
            answered = await self._call(once, patience_s=min(self.retry_s, 2.0))
            if answered:
                self._answered()
            return answered
        except (BrokerUnavailable, redis_errors.RedisError) as exc:
            log.warning("the event broker (Redis) did not answer a ping: %r", exc)
            return False

    async def aclose(self) -> None:
        if self._ping is not None:  # let a shared ping end (it never raises)
            await asyncio.wait([self._ping])
        boxes = list(self._boxes.values())
        # Give Redis a moment to take what is queued, then stop trying.
        await self._drained(boxes, within_s=min(self.retry_s, 2.0))
        pumps = [b.pump for b in boxes if b.pump is not None]
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
        self._boxes.clear()
        await self.writer.aclose()

    async def _call(self, call: Callable[[], Awaitable[T]], patience_s: float) -> T:
        return await retrying(call, patience_s=patience_s, fail=_unavailable)

    # -- writing -----------------------------------------------------------------------
    async def open_run(
        self, run_id: str, thread_id: str, *, resume: bool = False, fence: int | None = None
    ) -> None:
        if self._current(run_id, fence):
            return
        last = await self.store.last_id(run_id) if resume else 0
        if self._current(run_id, fence):
            return
        keys = [self.keys.run(run_id), self.keys.run_epoch(run_id)]

        async def create() -> int:  # the script answers the run's epoch
            return int(await self._open_run(keys=keys, args=[last, self.stream_ttl_s]))

        # On a request's path: one quick retry, then a 503 (nothing was accepted yet).
        epoch = await self._call(create, patience_s=min(self.retry_s, 0.5))
        self._answered()
        if not self._current(run_id, fence):
            stale = self._boxes.get(run_id)
            if stale is not None and stale.pump is not None:
                stale.pump.cancel()  # a claim this process lost before: its log is over
            box = self._boxes[run_id] = _Outbox(run_id, thread_id, last, epoch, fence)
            box.pump = asyncio.create_task(self._pump(box), name=f"redis-pump-{run_id}")

    def _current(self, run_id: str, fence: int | None) -> bool:
        """Whether the run's log is open here already (under this claim, if one is given)."""
        box = self._boxes.get(run_id)
        return box is not None and (fence is None or box.fence == fence)

    async def publish(self, run_id: str, event: str, data: bytes) -> int:
        box = self._boxes.get(run_id)
        if box is None or box.closed:
            raise KeyError(run_id)
        box.last_id += 1
        ev = Event(box.last_id, event, data)
        self.writer.add(run_id, ev, box.fence)
        box.pending.append(ev)
        box.idle.clear()
        box.wake.set()
        return ev.id

    async def publish_thread(self, thread_id: str, event: str, data: bytes) -> int:
        # After the events of this thread's runs already published here (the pumps).
        await self._drained(b for b in self._boxes.values() if b.thread_id == thread_id)
        keys = [self.keys.thread(thread_id), self.keys.thread_counter(thread_id)]

        async def append() -> int:  # the script answers the event's id in the thread
            return int(
                await self._append_thread(
                    keys=keys, args=[event, data, self.thread_cache_events, self.stream_ttl_s]
                )
            )

        return await self._call(append, patience_s=self.retry_s)

    async def _drained(self, boxes: Iterable[_Outbox], within_s: float | None = None) -> None:
        """Wait (up to `within_s`, default `retry_s`) until Redis has what these runs queued."""
        waits = [asyncio.ensure_future(b.idle.wait()) for b in boxes if not b.idle.is_set()]
        if waits:
            _, late = await asyncio.wait(waits, timeout=within_s or self.retry_s)
            for w in late:
                w.cancel()

    async def flush(self, run_id: str) -> None:
        await self.writer.flush()

    async def flush_with(self, run_id: str, unit: Unit[T]) -> T:
        return await self.writer.flush_with(unit)

    def write_later(self, unit: Unit[None]) -> None:
        self.writer.write_later(unit)

    async def close_run(self, run_id: str, result: object = None) -> None:
        box = self._boxes.get(run_id)
        if box is None:
            return
        if result is not None:
            body = dumps(result)
            box.result = body if len(body) <= RESULT_MAX_BYTES else b""
        if box.stored < box.last_id:
            try:
                await self.writer.flush()
            except Exception:
                log.exception("storing run events failed", extra={"run_id": run_id})
        box.closed = True
        box.idle.clear()
        box.wake.set()
        # Subscribers end at the marker; if Redis is away the pump writes it once Redis is
        # back (readers meanwhile end on the run's final status).
        await self._drained([box])

    async def drop_thread(self, thread_id: str) -> None:
        keys = [self.keys.thread(thread_id), self.keys.thread_counter(thread_id)]

        async def drop() -> object:
            return await self._drop_thread(keys=keys, args=[self.finished_ttl_s])

        try:
            await self._call(drop, patience_s=min(self.retry_s, 1.0))
        except BrokerUnavailable:
            log.warning("thread stream not dropped (it expires)", extra={"thread_id": thread_id})

    def _stored(self, upto: dict[str, int]) -> None:
        """The store has these runs' events up to these ids: the cache may drop them."""
        for run_id, last in upto.items():
            box = self._boxes.get(run_id)
            if box is None:
                continue
            box.stored = max(box.stored, last)
            keep_from = box.last_id - self.run_cache_events + 1
            want = min(box.stored + 1, keep_from)
            if want > box.trim_to:
                box.trim_to = want
                box.idle.clear()
                box.wake.set()
            # Redis away: what waits for it is bounded the same way (the store has it).
            while len(box.pending) > self.run_cache_events and box.pending[0].id <= box.stored:
                box.pending.popleft()

    async def _pump(self, box: _Outbox) -> None:
        key, ekey = self.keys.run(box.run_id), self.keys.run_epoch(box.run_id)
        tkeys = [self.keys.thread(box.thread_id), self.keys.thread_counter(box.thread_id)]
        delay = 0.05
        while True:
            if not box.work():
                box.idle.set()
                if box.sealed:
                    break
                await box.wake.wait()
                box.wake.clear()
                continue
            batch = [box.pending[i] for i in range(min(len(box.pending), PUMP_BATCH))]
            trim = box.trim_to if box.trim_to > box.trimmed else 0
            seal = box.closed and len(batch) == len(box.pending)
            # EVALSHA straight: a script object would first ask Redis whether its script
            # is loaded (SCRIPT EXISTS), a round trip per batch.
            commands: list[tuple[object, ...]] = []
            for ev in batch:
                args = [
                    ev.id,
                    ev.event,
                    ev.data,
                    self.thread_cache_events,
                    self.stream_ttl_s,
                    box.epoch,
                ]
                commands.append(("EVALSHA", self._append_run.sha, 4, key, *tkeys, ekey, *args))
            if trim:
                commands.append(("XTRIM", key, "MINID", f"{trim}-0"))
            if seal:
                args = [box.last_id, self.finished_ttl_s, box.epoch, box.result]
                commands.append(("EVALSHA", self._close_run.sha, 2, key, ekey, *args))
            try:
                await self._send(commands)
            except redis_errors.NoScriptError:
                # Redis lost its scripts (restarted, SCRIPT FLUSH): load them, send the
                # batch again (appends of ids already there and the marker are no-ops).
                await self._load_pump_scripts()
                continue
            except TRANSIENT as exc:
                if delay == 0.05:
                    log.warning("Redis unreachable; holding run events", extra={"error": str(exc)})
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_S)
                continue
            except redis_errors.RedisError:
                # Not a lost connection (e.g. Redis out of memory): the store has these
                # events, readers read them from there. Do not try them forever.
                log.exception("Redis refused run events", extra={"run_id": box.run_id})
            delay = 0.05
            self._answered()
            if batch:
                top = batch[-1].id
                while box.pending and box.pending[0].id <= top:
                    box.pending.popleft()
            box.trimmed = max(box.trimmed, trim)
            if seal:
                box.sealed = True
        if self._boxes.get(box.run_id) is box:
            del self._boxes[box.run_id]

    async def _send(self, commands: list[tuple[object, ...]]) -> None:
        """One round trip: a batch of one command is sent as it is (the same bytes as a
        pipeline of one, for half the client's CPU), a larger one as a pipeline (no
        MULTI: the scripts are atomic one by one)."""
        if len(commands) == 1:
            await self.client.execute_command(*commands[0])  # pyright: ignore[reportUnknownMemberType]
            return
        pipe = self.client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)  # pyright: ignore[reportUnknownMemberType]
        await pipe.execute()

    async def _load_pump_scripts(self) -> None:
        try:
            for script in (self._append_run, self._close_run):
                await self.client.script_load(script.script)  # pyright: ignore[reportUnknownMemberType]
        except (*TRANSIENT, redis_errors.RedisError):
            await asyncio.sleep(0.05)  # the next attempt tells what is wrong

    # -- reading -----------------------------------------------------------------------
    def subscribe(self, run_id: str, after: int | None) -> AsyncGenerator[Event, None]:
        box = self._boxes.get(run_id)
        # "From now on" for a run published here: its own last id (Redis may lag).
        local_last = box.last_id if box is not None and after is None else None
        return self._follow(run_id, after, local_last)

    async def ended(self, run_id: str) -> bytes | None:
        box = self._boxes.get(run_id)
        end = _End()
        async for _ in self._follow(run_id, None, box.last_id if box is not None else None, end):
            pass
        return end.result

    async def _xread(self, key: str, sid: bytes | str) -> list[Entry]:
        async def read() -> object:
            return await self.client.xread({key: sid}, count=READ_PAGE, block=self.block_ms)

        resp = await self._call(read, patience_s=self.retry_s)
        if not resp:
            return []
        # XREAD of one stream: [(key, [(id, fields), ...])]
        return cast("list[tuple[bytes, list[Entry]]]", resp)[0][1]

    async def _top(self, key: str) -> Entry | None:
        async def last() -> object:
            return await self.client.xrevrange(key, count=1)

        found = cast("list[Entry]", await self._call(last, patience_s=self.retry_s))
        return found[0] if found else None

    async def _finished(self, run_id: str) -> bool:
        if self.run_finished is None:
            return False
        try:
            return await self.run_finished(run_id)
        except Exception:
            log.exception("reading the run's status failed", extra={"run_id": run_id})
            return False

    async def _follow(
        self, run_id: str, after: int | None, local_last: int | None, end: _End | None = None
    ) -> AsyncGenerator[Event, None]:
        """`end`: gets the result the close marker carries, if any."""
        key = self.keys.run(run_id)
        top = await self._top(key)
        if top is None and (self.run_finished is None or await self._finished(run_id)):
            # No stream: a finished run (expired). Its events are in the store.
            if after is not None:
                async for ev in self._stored_range(run_id, after, None):
                    yield ev
            return
        if after is not None:
            cursor = after
        elif local_last is not None:
            cursor = local_last
        elif top is None:  # running, but its stream is gone (expired while quiet, lost)
            cursor = await self.store.last_id(run_id)
        else:
            n, seq = entry_id(top[0])
            if seq == CLOSE_SEQ:
                if end is not None:
                    end.result = top[1].get(b"o")
                return
            cursor = n
        sid: bytes | str = f"{cursor}-0"
        while True:
            entries = await self._xread(key, sid)
            if not entries:
                if await self._finished(run_id):  # the marker never came: the row says
                    async for ev in self._stored_range(run_id, cursor, None):
                        yield ev
                    return
                continue
            for raw_id, fields in entries:
                sid = raw_id
                n, seq = entry_id(raw_id)
                if seq == CLOSE_SEQ:
                    if cursor < n:
                        async for ev in self._stored_range(run_id, cursor, n):
                            yield ev
                    if end is not None:
                        end.result = fields.get(b"o")
                    return
                if seq == OPEN_SEQ or n <= cursor:
                    continue
                if n > cursor + 1:  # trimmed (or lost): the store has them
                    async for ev in self._stored_range(run_id, cursor, n - 1):
                        yield ev
                yield Event(n, fields[b"e"].decode(), fields[b"d"])
                cursor = n

    async def _stored_range(
        self, run_id: str, after: int, upto: int | None
    ) -> AsyncGenerator[Event, None]:
        """Stored events after `after` (up to `upto` inclusive; None: all). With an upper
        bound, waits up to GAP_WAIT_S for ones not stored yet (just published elsewhere)."""
        cursor = after
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GAP_WAIT_S
        while upto is None or cursor < upto:
            limit = READ_PAGE if upto is None else min(READ_PAGE, upto - cursor)
            page = await self.store.read(run_id, cursor, limit)
            for ev in page:
                yield ev
            if page:
                cursor = page[-1].id
            if upto is None:
                if len(page) < limit:
                    return
                continue
            if not page and cursor < upto:
                if loop.time() > deadline:
                    log.error(
                        "events missing from the store", extra={"run_id": run_id, "after": cursor}
                    )
                    return
                await asyncio.sleep(0.05)

    async def subscribe_thread(
        self, thread_id: str, after: int | None
    ) -> AsyncGenerator[Event, None]:
        key = self.keys.thread(thread_id)
        if after is None:
            top = await self._top(key)
            sid: bytes | str = top[0] if top is not None else "0-0"
        else:
            sid = f"{after}-0"
        while True:
            for raw_id, fields in await self._xread(key, sid):
                sid = raw_id
                if b"x" in fields:  # the thread was deleted
                    return
                yield Event(entry_id(raw_id)[0], fields[b"e"].decode(), fields[b"d"])


async def drop_keys(client: Redis, prefix: str) -> int:
    """Delete every key under `prefix` (tests; an operator resetting a namespace)."""
    dropped = 0
    cursor = 0
    while True:
        cursor, keys = cast(
            "tuple[int, list[bytes]]",
            await client.scan(cursor, match=f"{prefix}:*", count=500),  # type: ignore[misc]
        )
        if keys:
            dropped += int(await client.delete(*keys))
        if cursor == 0:
            return dropped


MAX_CONNECTIONS = 5000
"""Connections one process may open to Redis (its `maxclients` is 10000 by default)."""


@contextlib.asynccontextmanager
async def redis_client(url: str, *, block_s: float) -> AsyncGenerator[Redis]:
    """A client for the broker and the control bus: reads may block `block_s` (XREAD).

    Every live stream tail blocks in XREAD on a connection of its own, so the pool must hold
    one per open SSE stream: redis-py's default cap (100) would refuse the 101st stream."""
    client = Redis.from_url(  # pyright: ignore[reportUnknownMemberType]
        url,
        max_connections=MAX_CONNECTIONS,
        socket_connect_timeout=2.0,
        socket_timeout=block_s + 5.0,
        health_check_interval=30,
    )
    try:
        yield client
    finally:
        await client.aclose()
