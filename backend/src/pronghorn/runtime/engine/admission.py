"""Admission control: who may queue a run, and the slots runs wait for.

A run is *queued* from its acceptance until it holds its slots (its thread's turn, its
user's slot under `runs.max_concurrency_per_user`, a global slot under
`runs.max_concurrency`) and *active* while it executes. A new run that would have to wait
is refused (`Overloaded`, 429 with Retry-After) when the queue is full: globally
(`runs.max_queued`) or for its user (`runs.max_queued_per_user`). A run that can start at
once is always accepted. `check` and `enter` run in one step of the event loop, so two
concurrent creations never both take the last place.

The counts are this process's (every run of a thread belongs to one process on SQLite).
Scale-out (PostgreSQL + Redis) the queue caps count the cluster's queue instead: a run that
is not claimed in its accept transaction is refused there when the database already holds
that many unclaimed runs (persistence/repos/run_queue_load.py: the accept transaction
raises `QueueFull`, which `refuse` turns into `Overloaded`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import NoReturn

from pronghorn.config.schema.app import RunsConfig
from pronghorn.persistence.errors import QueueFull
from pronghorn.persistence.repos.run_queue_load import QueueCaps, QueueLoad, queue_full
from pronghorn.runtime.engine.limiter import FairLimiter
from pronghorn.runtime.engine.run_state import RunError
from pronghorn.runtime.errors import Overloaded
from pronghorn.runtime.observability.metrics import Metrics

DEFAULT_RETRY_AFTER_S = 5.0
MAX_RETRY_AFTER_S = 60.0


def queue_timeout_error(limit_s: float) -> RunError:
    """The error of a run that waited past `runs.max_queue_wait_s` and never started."""
    return {
        "error": "QueueTimeout",
        "message": f"The run waited more than {limit_s:g}s for a free slot "
        "(runs.max_queue_wait_s) and was not started",
    }


class Admission:
    def __init__(self, config: RunsConfig, metrics: Metrics | None = None) -> None:
        self.config = config
        self.metrics = metrics
        self.limiter = FairLimiter(config.max_concurrency)
        self.queued = 0
        self.active = 0
        self._queued_by: dict[str, int] = {}
        self._active_by: dict[str, int] = {}
        self._user_limiters: dict[str, FairLimiter] = {}
        self._avg_run_s: float | None = None

    def resize(self, config: RunsConfig) -> None:
        self.config = config
        self.limiter.resize(config.max_concurrency)
        cap = config.max_concurrency_per_user
        for limiter in self._user_limiters.values():
            limiter.resize(cap if cap is not None else 1 << 30)

    # -- accepting -----------------------------------------------------------------------
    def queued_of(self, user: str) -> int:
        return self._queued_by.get(user, 0)

    def active_of(self, user: str) -> int:
        return self._active_by.get(user, 0)

    def would_wait(self, user: str, *, thread_busy: bool) -> bool:
        cfg = self.config
        if thread_busy or self.active + self.queued >= cfg.max_concurrency:
            return True
        cap = cfg.max_concurrency_per_user
        return cap is not None and self.active_of(user) + self.queued_of(user) >= cap

    def check(self, user: str, *, thread_busy: bool) -> None:
        """Raise `Overloaded` when a new run of `user` would wait and its queue is full."""
        if not self.would_wait(user, thread_busy=thread_busy):
            return
        self.refuse_if_full(self.queued, self.queued_of(user), self.active_of(user))

    def refuse_if_full(self, queued: int, user_queued: int, user_active: int) -> None:
        """Raise `Overloaded` when one more waiting run would exceed a queue cap, given how
        many runs wait (in all, and the user's) and how many of the user's run. Scale-out
        the counts are the cluster's, from the database (cluster/run_queue_cluster.py)."""
        cfg = self.config
        caps = QueueCaps(cfg.max_queued, cfg.max_queued_per_user)
        full = queue_full(caps, QueueLoad(queued, user_queued, user_active))
        if full is not None:
            self.refuse(full)

    def refuse(self, full: QueueFull) -> NoReturn:
        """Refuse a run past the queue cap `full` names (`Overloaded`, counted)."""
        if full.cap == "max_queued":
            message = (
                f"Too many runs are waiting ({full.queued}, runs.max_queued is "
                f"{full.limit}); retry later"
            )
        else:
            message = (
                f"You have {full.user_queued} runs waiting and "
                f"{full.user_running} running (runs.max_queued_per_user is {full.limit}); "
                "retry when one has finished"
            )
        if self.metrics is not None:
            self.metrics.runs_refused.labels(full.cap).inc()
        raise Overloaded(message, retry_after_s=self.retry_after_s(), reason=full.cap)

    def check_many(self, user: str, count: int) -> None:
        """Raise `Overloaded` unless `count` new runs of `user` on fresh threads (a batch)
        would all be accepted; counts nothing."""
        entered = 0
        try:
            for _ in range(count):
                self.check(user, thread_busy=False)
                self.enter(user)
                entered += 1
        finally:
            for _ in range(entered):
                self.leave(user)

    def retry_after_s(self) -> float:
        """About when a slot frees: the recent average run time, within [1 s, 60 s]."""
        avg = self._avg_run_s if self._avg_run_s is not None else DEFAULT_RETRY_AFTER_S
        return min(MAX_RETRY_AFTER_S, max(1.0, avg))

    def enter(self, user: str) -> None:
        """A run of `user` is accepted (or about to be): it counts as queued."""
        self.queued += 1
        self._queued_by[user] = self.queued_of(user) + 1
        if self.metrics is not None:
            self.metrics.runs_queued.inc()

    def leave(self, user: str) -> None:
        """A queued run goes without executing (refused by the database, cancelled, timed
        out in the queue)."""
        self._dec_queued(user)

    # -- slots -----------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def slots(self, user: str) -> AsyncGenerator[None]:
        """Wait for the user's slot, then a global one; hold both for the block. Cancelling
        the wait (or a timeout around it) gives back what was taken."""
        user_limiter = self._user_limiter(user)
        if user_limiter is not None:
            await user_limiter.acquire()
        try:
            await self.limiter.acquire()
        except BaseException:
            if user_limiter is not None:
                self._release_user(user, user_limiter)
            raise
        try:
            yield
        finally:
            self.limiter.release()
            if user_limiter is not None:
                self._release_user(user, user_limiter)

    def started(self, user: str, waited_s: float) -> None:
        self._dec_queued(user)
        self.active += 1
        self._active_by[user] = self.active_of(user) + 1
        if self.metrics is not None:
            self.metrics.runs_active.inc()
            self.metrics.queue_wait.observe(waited_s)

    def finished(self, user: str, ran_s: float) -> None:
        self.active -= 1
        left = self.active_of(user) - 1
        if left > 0:
            self._active_by[user] = left
        else:
            self._active_by.pop(user, None)
        self._avg_run_s = ran_s if self._avg_run_s is None else 0.8 * self._avg_run_s + 0.2 * ran_s
        if self.metrics is not None:
            self.metrics.runs_active.dec()
            self.metrics.run_duration.observe(ran_s)

    def _dec_queued(self, user: str) -> None:
        self.queued -= 1
        left = self.queued_of(user) - 1
        if left > 0:
            self._queued_by[user] = left
        else:
            self._queued_by.pop(user, None)
        if self.metrics is not None:
            self.metrics.runs_queued.dec()

    def _user_limiter(self, user: str) -> FairLimiter | None:
        cap = self.config.max_concurrency_per_user
        limiter = self._user_limiters.get(user)
        if limiter is None:
            if cap is None:
                return None
            limiter = self._user_limiters[user] = FairLimiter(cap)
        return limiter

    def _release_user(self, user: str, limiter: FairLimiter) -> None:
        limiter.release()
        if limiter.active == 0 and limiter.waiting == 0:
            self._user_limiters.pop(user, None)
