"""``SubagentPool``: the process-wide limit on running sub-agents (an app-level component).

It hangs off the AppRuntime (built in the lifespan, resized on config reload) and is passed to
every lead agent the factory builds; a sub-agent waits here, first come first served, when
``subagents.max_concurrent`` are already running. It also carries the directory that finds
a user's custom agents.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator

from pronghorn.skills.model import RunSkillSource
from pronghorn.subagents.specs import AgentDirectory


class SubagentPool:
    def __init__(
        self,
        limit: int,
        directory: AgentDirectory | None = None,
        skills: RunSkillSource | None = None,
    ) -> None:
        self.limit = limit
        self.directory = directory
        self.skills = skills  # the users' enabled skills, listed in a sub-agent's prompt
        self.running = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.done())

    def has_room(self) -> bool:
        return self.running < self.limit and not self.waiting

    def resize(self, limit: int) -> None:
        self.limit = limit
        self._wake()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncGenerator[None]:
        """Hold one of the ``limit`` slots while the body runs (cancellation-safe)."""
        await self._acquire()
        try:
            yield
        finally:
            self.running -= 1
            self._wake()

    async def _acquire(self) -> None:
        if self.has_room():
            self.running += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted as we were cancelled: pass it on
                self.running -= 1
                self._wake()
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(fut)
            raise

    def _wake(self) -> None:
        while self._waiters and self.running < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self.running += 1
                fut.set_result(None)
