"""Leases on the runs a replica executes (scale-out): the heartbeat that renews them, the
check a run makes before it writes, and the sweeper that recovers other replicas' expired
ones (and ends queued runs that waited past `runs.max_queue_wait_s`: any replica's sweeper
may, each run exactly once).

A claimed run (persistence/repos/run_claims.py) carries the replica's id and a fencing
token. The heartbeat renews every held lease each `runs.lease_s / 3`; a lease it cannot
renew was taken over (another replica's sweeper saw it expire): the run is stopped and its
final write, conditioned on the token, is refused. Locally each lease has a deadline on the
monotonic clock, set from *before* the renewal was sent, so it never outlives the lease in
the database; a write (an event) after that deadline first proves the lease again
(`confirm`), which is what stops a replica that was frozen (SIGSTOP) past its lease from
writing anything once it runs again. A frozen replica's open transaction keeps its row
locks, which the sweeper skips: when one of its leases lapsed, the sweeper ends those
sessions (persistence/repos/stale_sessions.py) and recovers the runs in the same sweep.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from pronghorn.persistence.db import Database
from pronghorn.persistence.outage import OutageLog
from pronghorn.persistence.repos import run_claims, stale_sessions
from pronghorn.runtime.engine.admission import queue_timeout_error
from pronghorn.runtime.engine.fence import LeaseLost
from pronghorn.runtime.engine.jobs import Job

log = logging.getLogger("pronghorn.runs")

LEASE_ERROR = {
    "error": "LeaseExpired",
    "message": "The replica executing this run stopped renewing its lease (it died or "
    "froze); it was not resumed (runs.recover: error).",
}


@dataclass
class _Held:
    job: Job
    fence: int
    deadline: float  # monotonic


OnRecovered = Callable[[list[run_claims.Recovered]], Awaitable[None]]


class Leases:
    def __init__(
        self,
        db: Database,
        *,
        owner: str,
        lease_s: Callable[[], float],
        recover_mode: Callable[[], str],
        max_queue_wait_s: Callable[[], float | None] = lambda: None,
    ) -> None:
        self.db = db
        self.owner = owner
        self.lease_s = lease_s
        self.recover_mode = recover_mode
        self.on_recovered: OnRecovered | None = None
        self.max_queue_wait_s = max_queue_wait_s
        self._held: dict[str, _Held] = {}
        self._tasks: list[asyncio.Task[None]] = []

    # -- held leases ---------------------------------------------------------------------
    def hold(self, job: Job, fence: int, *, since: float | None = None) -> None:
        """`job` was claimed with `fence` at `since` (monotonic, default now)."""
        start = time.monotonic() if since is None else since
        self._held[job.run_id] = _Held(job, fence, start + self.lease_s())

    def drop(self, run_id: str) -> None:
        self._held.pop(run_id, None)

    async def check(self, job: Job) -> None:
        """Before a write of `job`: raise `LeaseLost` unless its lease provably holds."""
        held = self._held.get(job.run_id)
        if held is None:
            if job.fence is not None:
                raise LeaseLost(job.run_id)
            return
        if time.monotonic() < held.deadline:
            return
        await self._renew({job.run_id: held})
        if job.run_id not in self._held:
            raise LeaseLost(job.run_id)

    async def _renew(self, held: dict[str, _Held]) -> None:
        if not held:
            return
        sent = time.monotonic()
        fences = {run_id: h.fence for run_id, h in held.items()}
        lease_s = self.lease_s()
        kept = await self.db.write(
            lambda c: run_claims.renew(c, owner=self.owner, lease_s=lease_s, held=fences)
        )
        for run_id, h in held.items():
            if run_id in kept:
                h.deadline = sent + lease_s
                continue
            if self._held.get(run_id) is h:
                del self._held[run_id]
                log.warning(
                    "lost the lease of a run: another replica took it over; stopping it",
                    extra={"run_id": run_id},
                )
                h.job.state.lose_lease()
                h.job.interrupt("lease_lost")

    # -- background tasks ----------------------------------------------------------------
    def start(self, on_recovered: OnRecovered) -> None:
        """Renew held leases and sweep expired ones; `on_recovered` hears of the runs each
        sweep recovered."""
        self.on_recovered = on_recovered
        self._tasks = [
            asyncio.create_task(self._heartbeat(), name="lease-heartbeat"),
            asyncio.create_task(self._sweeper(), name="lease-sweeper"),
        ]

    async def _heartbeat(self) -> None:
        report = OutageLog(log, "renewing run leases")
        while True:
            await asyncio.sleep(self.lease_s() / 3)
            try:
                await self._renew(dict(self._held))
                report.ok()
            except Exception as exc:
                report.failed(exc)

    async def _sweeper(self) -> None:
        report = OutageLog(log, "recovering expired run leases")
        while True:
            await asyncio.sleep(self.lease_s() / 3)
            try:
                await self.sweep()
                report.ok()
            except Exception as exc:
                report.failed(exc)

    async def sweep(self) -> list[run_claims.Recovered]:
        """Recover the runs whose lease expired (any replica's), and end the queued runs
        that waited past `runs.max_queue_wait_s`; what was recovered or ended."""
        mode = self.recover_mode()

        def recover(c: Connection) -> list[run_claims.Recovered]:
            return run_claims.recover_expired(c, mode=mode, error=LEASE_ERROR, sweeper=self.owner)

        found = await self.db.write(recover)
        if not self.db.is_sqlite and await self._end_stale_sessions():
            found += await self.db.write(recover)  # the rows their locks kept from this sweep
        if found:
            log.warning(
                "recovered runs whose lease expired", extra={"count": len(found), "mode": mode}
            )
        limit = self.max_queue_wait_s()
        expired: list[run_claims.Recovered] = []
        if limit is not None:
            error = queue_timeout_error(limit)
            expired = await self.db.write(
                lambda c: run_claims.expire_queued(c, max_wait_s=limit, error=dict(error))
            )
            if expired:
                log.warning(
                    "queued runs waited past runs.max_queue_wait_s; ended without starting",
                    extra={"count": len(expired)},
                )
        if (found or expired) and self.on_recovered is not None:
            await self.on_recovered([*found, *expired])
        return [*found, *expired]

    async def _end_stale_sessions(self) -> bool:
        """End the sessions a frozen replica holds open in a transaction past its lease
        (persistence/repos/stale_sessions.py); whether there were any."""
        try:
            ended = await self.db.write(
                lambda c: stale_sessions.end_stale_sessions(c, sweeper=self.owner)
            )
        except DBAPIError as exc:  # e.g. replicas on different roles may not end each other's
            log.warning("could not end a frozen replica's sessions", extra={"detail": str(exc)})
            return False
        if ended:
            log.warning(
                "ended the database sessions of a replica whose run lease lapsed",
                extra={"count": len(ended)},
            )
        return bool(ended)

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
