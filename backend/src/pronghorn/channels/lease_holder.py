"""Runs a channel's receiver while this replica holds its lease (channels/lease.py).

Every `ttl/3` the holder takes (or renews) the lease: taken, the receiver starts; lost (or
not renewed for a whole `ttl`, say the lease store is away), it stops. `end` stops the
receiver and gives the lease up, so another replica takes over at its next try.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from pronghorn.channels.lease import Lease

log = logging.getLogger("pronghorn.channels")


class LeaseHolder:
    def __init__(
        self,
        lease: Lease,
        name: str,
        ttl_s: float,
        start: Callable[[], Awaitable[None]],
        stop: Callable[[], Awaitable[None]],
    ) -> None:
        self.lease, self.name, self.ttl_s = lease, name, ttl_s
        self._start, self._stop = start, stop
        self.holding = False
        self._task: asyncio.Task[None] | None = None

    def begin(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=f"channel-{self.name}-lease")

    async def end(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.holding:
            await self._release()

    async def _release(self) -> None:
        self.holding = False
        await self._stop()
        try:
            await self.lease.give_up(self.name)
        except Exception as exc:  # it expires on its own
            log.warning(
                "channel lease not released", extra={"channel": self.name, "error": str(exc)}
            )

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        renewed_at = loop.time()
        while True:
            try:
                held = await self.lease.take(self.name, self.ttl_s)
            except Exception as exc:
                log.warning(
                    "channel lease check failed", extra={"channel": self.name, "error": str(exc)}
                )
                held = self.holding and loop.time() - renewed_at < self.ttl_s
            else:
                if held:
                    renewed_at = loop.time()
            if held and not self.holding:
                log.info("channel lease taken", extra={"channel": self.name})
                self.holding = True
                await self._start()
            elif not held and self.holding:
                log.warning("channel lease lost", extra={"channel": self.name})
                await self._release()
            await asyncio.sleep(self.ttl_s / 3)
