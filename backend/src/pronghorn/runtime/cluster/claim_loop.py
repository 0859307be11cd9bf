"""The claim loop of a replica (scale-out, run_queue_cluster.py): claims runs from the
database queue while it has free slots (persistence/repos/run_claims.py).

It wakes when told to (`wake`: a run was accepted or settled here, or another replica's
`work` notice arrived on the control bus) and, as a safety net, every `runs.queue_poll_s`
(a lost notice, a run whose `after_seconds` came due, a slot freed by a cap elsewhere).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from pronghorn.persistence.outage import OutageLog

log = logging.getLogger("pronghorn.runs")

ERROR_BACKOFF_S = 1.0


class ClaimLoop:
    def __init__(
        self, claim_once: Callable[[], Awaitable[bool]], poll_s: Callable[[], float]
    ) -> None:
        """`claim_once()`: claim and start one run; False when there is none to claim or
        no free slot."""
        self.claim_once = claim_once
        self.poll_s = poll_s
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._timers: set[asyncio.TimerHandle] = set()
        self._report = OutageLog(log, "claiming runs")

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="run-queue")
        self.wake()

    def wake(self) -> None:
        self._wake.set()

    def wake_at(self, delay_s: float) -> None:
        """Wake once `delay_s` from now (a run's after_seconds)."""
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle

        def fire() -> None:
            self._timers.discard(handle)
            self.wake()

        handle = loop.call_later(delay_s, fire)
        self._timers.add(handle)

    async def _loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll_s())
            self._wake.clear()
            try:
                while await self.claim_once():
                    pass
                self._report.ok()
            except Exception as exc:
                self._report.failed(exc)
                await asyncio.sleep(ERROR_BACKOFF_S)

    async def aclose(self) -> None:
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
