"""One running channel: its transport, a bounded inbound queue with workers, and the
driver tasks following its runs. A full queue answers "busy" at once (backpressure)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections import Counter
from dataclasses import dataclass

from pronghorn.channels.dispatcher import Dispatcher, target_of
from pronghorn.channels.driver import Asked, RunDriver, Turn
from pronghorn.channels.errors import PlatformError
from pronghorn.channels.transport import Transport
from pronghorn.channels.types import ChannelCounts, Inbound
from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.channels")

BUSY = "I am busy right now; please try again in a minute."


@dataclass(frozen=True, slots=True)
class ChannelStatus:
    name: str
    running: bool
    last_error: str | None
    last_error_at: float | None
    counts: ChannelCounts


class Channel:
    def __init__(self, runtime: AppRuntime, name: str, transport: Transport) -> None:
        cfg = runtime.config.channels
        self.runtime = runtime
        self.name = name
        self.transport = transport
        self.counts = ChannelCounts()
        self.queue: asyncio.Queue[Inbound] = asyncio.Queue(maxsize=cfg.queue_size)
        self.workers_n = cfg.workers
        self._workers: list[asyncio.Task[None]] = []
        self._turns: set[asyncio.Task[None]] = set()
        self._active: Counter[str] = Counter()
        self.running = False
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        self.driver = RunDriver(transport, runtime.broker, self.counts)
        self.dispatcher = Dispatcher(
            runtime=runtime,
            name=name,
            transport=transport,
            counts=self.counts,
            spawn=self._spawn,
            active=lambda thread_id: self._active[thread_id],
        )

    def report(self, error: str) -> None:
        """A transport failure (shown in the status; the transport logs and retries)."""
        self.last_error, self.last_error_at = error, time.time()
        self.counts.errors += 1

    async def start(self) -> None:
        self._workers = [
            asyncio.create_task(self._work(), name=f"channel-{self.name}-{i}")
            for i in range(self.workers_n)
        ]
        await self.transport.start(self.offer, self.report)
        self.running = True
        log.info("channel started", extra={"channel": self.name})

    async def stop(self) -> None:
        self.running = False
        with contextlib.suppress(Exception):
            await self.transport.stop()
        tasks = [*self._workers, *self._turns]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._workers.clear()
        log.info("channel stopped", extra={"channel": self.name})

    async def offer(self, msg: Inbound) -> None:
        """The transport's sink: queue the message, or answer busy when the queue is full."""
        self.counts.received += 1
        try:
            self.queue.put_nowait(msg)
        except asyncio.QueueFull:
            self.counts.dropped_busy += 1
            if msg.from_bot:
                return
            try:
                await self.transport.send(target_of(msg), self.transport.render(BUSY))
            except PlatformError as exc:
                log.warning("busy reply failed", extra={"channel": self.name, "error": str(exc)})

    async def _work(self) -> None:
        while True:
            msg = await self.queue.get()
            try:
                await self.dispatcher.handle(msg)
            finally:
                self.queue.task_done()

    def _asked(self, turn: Turn, asked: Asked) -> None:
        """What `turn` ends asking, heard before the question is posted."""
        if asked == "clarification":
            self.dispatcher.question_asked(turn)

    def _spawn(self, turn: Turn) -> None:
        thread_id = turn.job.thread_id
        self._active[thread_id] += 1

        async def follow() -> None:
            current: Turn | None = turn
            counted = True  # this turn's run counts as the thread's active one
            try:
                while current is not None:
                    record = functools.partial(self._asked, current)
                    asked = await self.driver.drive(current, record)
                    self._release(thread_id)
                    counted = False
                    if asked != "approval":
                        return
                    # Not counted while waiting: the user's answer must see the pending
                    # approval. A timeout's denial run, nobody else follows: followed here.
                    current = await self.driver.after_approval(current, self.runtime.runs.active)
                    if current is not None:
                        self._active[thread_id] += 1
                        counted = True
            except Exception:
                log.exception("channel turn failed", extra={"channel": self.name})
            finally:
                if counted:
                    self._release(thread_id)

        task = asyncio.create_task(follow(), name=f"channel-{self.name}-turn")
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)

    def _release(self, thread_id: str) -> None:
        self._active[thread_id] -= 1
        if self._active[thread_id] <= 0:
            del self._active[thread_id]

    def status(self) -> ChannelStatus:
        return ChannelStatus(
            self.name, self.running, self.last_error, self.last_error_at, self.counts
        )
