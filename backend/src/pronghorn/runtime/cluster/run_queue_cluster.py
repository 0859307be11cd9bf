"""The run queue of a cluster of replicas (PostgreSQL + Redis): runs go through the
database queue instead of straight to this process (engine/run_queue.py is the contract).

- Accepting: a run whose thread is idle is claimed by the accepting replica in the accept
  transaction itself when it has a free slot (no added latency); any other run is queued
  unclaimed and a `work` notice wakes every replica (control.BROADCAST).
- Claiming: the claim loop (claim_loop.py) claims the oldest claimable run while a slot is free
  (persistence/repos/run_claims.py: per-thread order, caps, fair queue).
- Following: a run accepted here but executed elsewhere still has its `Job` here (what
  `create` returned, for `wait`), done once the run's log closes.
- Leases: leases.py (heartbeat, fencing, the sweeper that recovers expired ones).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pronghorn.auth.principal import LOCAL_PRINCIPAL
from pronghorn.config.holder import ConfigHolder
from pronghorn.persistence.db import Database
from pronghorn.persistence.records.json_object import JsonObject
from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos import assistants as assistants_repo
from pronghorn.persistence.repos import run_claims, run_units
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.repos.run_queue_load import QueueCaps, queue_load
from pronghorn.persistence.repos.runs import INFLIGHT
from pronghorn.runtime.access import principal_from_record
from pronghorn.runtime.cluster.claim_loop import ClaimLoop
from pronghorn.runtime.cluster.leases import Leases
from pronghorn.runtime.engine.admission import Admission
from pronghorn.runtime.engine.control import BROADCAST, ControlBus, ControlMessage
from pronghorn.runtime.engine.job_table import JobTable
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.run_queue import AcceptTerms, RunHost
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.engine.run_state import CancelAction, RunError, run_status
from pronghorn.runtime.engine.thread_turns import ThreadTurns
from pronghorn.runtime.errors import DomainError
from pronghorn.runtime.events.broker import BrokerUnavailable, EventBroker
from pronghorn.runtime.events.serialization import dumps

if TYPE_CHECKING:
    from pronghorn.config.schema.app import RunsConfig

log = logging.getLogger("pronghorn.runs")

ANSWERED_S = 0.5
"""An accept asks Redis whether it answers unless it answered this process this recently."""


class ClusterRunQueue:
    def __init__(
        self,
        *,
        db: Database,
        broker: EventBroker,
        control: ControlBus,
        settings: ConfigHolder,
        admission: Admission,
        jobs: JobTable,
        turns: ThreadTurns,
        leases: Leases,
    ) -> None:
        self.db = db
        self.broker = broker
        self.control = control
        self.settings = settings
        self.admission = admission
        self.jobs = jobs
        self.turns = turns
        self.leases = leases
        self.owner = leases.owner
        self._host: RunHost | None = None
        self.claims = ClaimLoop(self.claim_once, lambda: self.config.queue_poll_s)
        self._handles: dict[str, Job] = {}  # accepted here, not (yet) executing here
        self._followers: dict[str, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._reserved = 0  # slots promised to claims under way
        self.claiming = False
        self._starved = False  # the last claim pass stopped for want of a free slot
        self.work = ControlMessage("work", "", sender=self.owner)

    @property
    def config(self) -> RunsConfig:
        return self.settings.current.runs

    @property
    def host(self) -> RunHost:
        assert self._host is not None, "the queue is not started"
        return self._host

    def start(self, host: RunHost) -> None:
        self._host = host
        self.claiming = True
        self.leases.start(self._recovered)
        self.claims.start()

    # -- slots ---------------------------------------------------------------------------
    def free_slots(self) -> int:
        return self.config.max_concurrency - len(self.jobs) - self._reserved

    def caps(self) -> run_claims.Caps:
        cfg = self.config
        return run_claims.Caps(
            total=cfg.cluster_max_concurrency, per_user=cfg.max_concurrency_per_user
        )

    # -- accepting -----------------------------------------------------------------------
    def admit(self, user: str, thread_id: str) -> None:
        """The queue caps are checked in the accept transaction (`terms`)."""

    def terms(self, req: RunCreate, thread_id: str) -> AcceptTerms:
        """Nobody's until claimed: by this replica in the accept transaction when its
        thread is idle and a slot is free, else by any replica's queue."""
        return AcceptTerms(
            owner=None,
            claimable_at=self.claimable_at(req),
            claim_if_idle=self.fast_claim(req, thread_id),
            queue_caps=self.queue_caps(),
        )

    def release(self, terms: AcceptTerms) -> None:
        if terms.claim_if_idle is not None:
            self._reserved -= 1

    async def open_log(self, run_id: str, thread_id: str) -> None:
        """The replica that executes the run opens its log (it may be another one): here
        only refuse (503) before anything is written when the broker is unreachable: Redis
        is asked (a ping) unless it answered this process within `ANSWERED_S` — a busy
        replica's pumps talk to it all the time, and a run's log opened on Redis that
        went away meanwhile is handled as before (the run goes back to the queue)."""
        # Not an isinstance check of the Redis broker: importing it would load `redis`
        # into every gateway (tests/unit/test_lazy_imports.py).
        if not await self.broker.answering(ANSWERED_S):
            raise BrokerUnavailable("The event broker (Redis) is unreachable")

    async def abandon_log(self, run_id: str) -> None:
        """No log was opened."""

    def accepted(self, job: Job, claimed: bool) -> bool:
        if not claimed:
            self.admission.leave(job.principal.identity)  # queued in the database, not here
            self.queued(job)
            return False
        job.fence = 1
        self.leases.hold(job, 1)
        return True

    def not_started(self, job: Job) -> None:
        self.leases.drop(job.run_id)
        self.jobs.remove(job.run_id)

    # -- running -------------------------------------------------------------------------
    def order(self, thread_id: str, turn: asyncio.Future[None]) -> asyncio.Future[None] | None:
        return None  # the claim orders a thread's runs

    async def delay(self, job: Job) -> None:
        """A run is claimable only once its `after_seconds` are over (`claimable_at`)."""

    def turn_ended(self, thread_id: str) -> None:
        self.notify()  # runs queued behind the turn, on any replica

    def orphans(self, rows: Sequence[RunRecord]) -> list[RunRecord]:
        """Queued runs are nobody's yet; leased ones are the lease sweeper's."""
        return [r for r in rows if r.owner is not None and not r.leased]

    def fast_claim(self, req: RunCreate, thread_id: str) -> dict[str, object] | None:
        """The claim columns a new run gets if its thread turns out idle, with a slot
        reserved for it (give it back with `unreserve`); None when it must queue."""
        caps = self.caps()
        if (
            not self.claiming
            or req.after_seconds
            or caps.total is not None
            or caps.per_user is not None
            or self.turns.held(thread_id)
            or self.free_slots() <= 0
        ):
            return None
        self._reserved += 1
        return {
            "owner": self.owner,
            "fence": 1,
            "lease_expires_at": now() + timedelta(seconds=self.config.lease_s),
        }

    # -- queue caps ----------------------------------------------------------------------
    def queue_caps(self) -> QueueCaps | None:
        """The caps `runs.max_queued` / `max_queued_per_user` the accept transaction counts
        the cluster's queue against (None: no cap): it counts the unclaimed runs in the
        database under an advisory lock, so concurrent accepts on any replica count each
        other, and refuses (`QueueFull`, then `Overloaded`, 429) as on one process."""
        cfg = self.config
        if cfg.max_queued is None and cfg.max_queued_per_user is None:
            return None
        return QueueCaps(cfg.max_queued, cfg.max_queued_per_user)

    async def check_room(self, user: str, count: int) -> None:
        """A batch of `count` stateless runs of `user`, before any is created: refused when
        the ones this replica cannot start at once would not all fit in the cluster's queue
        (each run is checked again as it is accepted)."""
        cfg = self.config
        if cfg.max_queued is None and cfg.max_queued_per_user is None:
            return
        caps = self.caps()
        at_once = 0 if caps.total is not None or caps.per_user is not None else self.free_slots()
        queued = count - max(at_once, 0)
        if queued <= 0:
            return
        load = await self.db.read(lambda c: queue_load(c, user, lock=False))
        self.admission.refuse_if_full(
            load.queued + queued - 1, load.user_queued + queued - 1, load.user_running
        )

    def claimable_at(self, req: RunCreate) -> datetime | None:
        return now() + timedelta(seconds=req.after_seconds) if req.after_seconds else None

    # -- accepted, queued ----------------------------------------------------------------
    def queued(self, job: Job) -> None:
        """`job` was accepted here and queued: follow it until it ends (wherever it runs)
        and tell the replicas there is work."""
        self._handles[job.run_id] = job
        task = asyncio.create_task(self._follow(job), name=f"follow-{job.run_id}")
        self._followers[job.run_id] = task
        task.add_done_callback(lambda _t, rid=job.run_id: self._followers.pop(rid, None))
        if job.request.after_seconds:
            self.claims.wake_at(job.request.after_seconds)
        self.notify()

    async def _follow(self, job: Job) -> None:
        try:
            async for _ in self.broker.subscribe(job.run_id, None):
                pass
            row = await self.db.write(lambda c: run_units.get_run(c, job.run_id, job.thread_id))
            status = run_status(row.status) if row is not None else "interrupted"
            job.state.ended_elsewhere(status, await self.host.output(job.thread_id, job.run_id))
        except DomainError as exc:
            job.state.unreadable(
                {"__error__": {"error": type(exc).__name__, "message": exc.message}}
            )
        if self._handles.get(job.run_id) is job:
            del self._handles[job.run_id]
            job.done.set()

    def notify(self) -> None:
        """Wake this replica's queue and tell the others (a `work` notice)."""
        self.claims.wake()
        self.tell_others()

    def tell_others(self) -> None:
        task = asyncio.create_task(self._notify_others())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _notify_others(self) -> None:
        try:
            await self.control.send(BROADCAST, self.work)
        except DomainError:
            log.warning("work notice not sent (control bus down); replicas poll meanwhile")

    def heard(self, message: ControlMessage) -> None:
        """A `work` notice: claim, unless this replica sent it (it woke its queue then)."""
        if message.sender != self.owner:
            self.claims.wake()

    # -- claiming ------------------------------------------------------------------------
    async def claim_once(self) -> bool:
        if not self.claiming:
            return False
        # No slot: a claimable run may wait here until one is free (`finished` claims then).
        self._starved = self.free_slots() <= 0
        if self._starved:
            return False
        self._reserved += 1
        reserved = True
        try:
            since = time.monotonic()
            owner, lease_s, caps = self.owner, self.config.lease_s, self.caps()
            exclude = self.turns.threads()
            row = await self.db.write(
                lambda c: run_claims.claim_next(
                    c, owner=owner, lease_s=lease_s, caps=caps, exclude_threads=exclude
                )
            )
            if row is None:
                return False
            job = await self._job_of(row)
            if job is None:
                return True
            self._reserved -= 1
            reserved = False
            await self._begin(job, row.fence, since)
            return True
        finally:
            if reserved:
                self._reserved -= 1

    async def cancel_queued(self, run_id: str, action: CancelAction, wait: bool) -> bool:
        """Cancel a run nobody executes yet (settled here), or one claimed meanwhile
        (cancelled where it runs); False when neither (its replica does not answer)."""
        for _ in range(20):
            if await self.cancel_unclaimed(run_id, action, wait):
                return True
            if await self.host.cancel_elsewhere(run_id, action, wait):
                return True
            job = self.jobs.get(run_id)
            if job is not None:  # claimed here meanwhile
                job.interrupt(action)
                if wait:
                    await job.done.wait()
                return True
            found = await self.db.write(lambda c: run_units.run_status_owner(c, run_id))
            if found is None or found[0] not in INFLIGHT:
                return True
            if found[1] is not None and found[1] != self.owner:
                return False  # claimed by a replica that does not answer
            await asyncio.sleep(0.05)  # locked for a moment (being claimed or settled)
        return False

    async def cancel_unclaimed(self, run_id: str, action: CancelAction, wait: bool) -> bool:
        """Cancel a queued run nobody executes yet: claim it (whatever its turn) and settle
        it through the usual path without executing it. False when it could not be
        claimed (claimed elsewhere meanwhile, or locked for a moment)."""
        since = time.monotonic()
        owner, lease_s = self.owner, self.config.lease_s
        row = await self.db.write(
            lambda c: run_claims.claim_unclaimed(c, run_id, owner=owner, lease_s=lease_s)
        )
        if row is None:
            return False
        job = await self._job_of(row)
        if job is None:
            return True
        job.interrupt(action)
        await self._begin(job, row.fence, since)
        if wait:
            await job.done.wait()
        return True

    async def _begin(self, job: Job, fence: int, since: float) -> None:
        job.fence = fence
        self.leases.hold(job, fence, since=since)
        self.admission.enter(job.principal.identity)
        try:
            await self.host.start_job(job)
        except BaseException:
            # Not started (the broker is down): back to the queue for any replica.
            self.leases.drop(job.run_id)
            self.jobs.remove(job.run_id)
            self.admission.leave(job.principal.identity)
            owner = self.owner
            with contextlib.suppress(Exception):
                await self.db.write(
                    lambda c: run_claims.release(c, job.run_id, owner=owner, fence=fence)
                )
            raise

    async def _job_of(self, row: RunRecord) -> Job | None:
        """The job of a claimed run: this replica's handle when it accepted the run, else
        one rebuilt from the row; None when it cannot run (then it is settled `error`)."""
        attempt = row.attempt
        resume = attempt > 1 and await self.host.wrote_checkpoint(row.thread_id, row.run_id)
        handle = self._handles.pop(row.run_id, None)
        if handle is not None:
            follower = self._followers.pop(row.run_id, None)
            if follower is not None:
                follower.cancel()
            handle.attempt, handle.resume = attempt, resume
            return handle
        assistant, thread = await self.db.read(
            lambda c: (
                assistants_repo.get(c, row.assistant_id),
                threads_repo.get_row(c, row.thread_id),
            )
        )
        kwargs = dict(row.kwargs)
        problem = None
        req: RunCreate | None = None
        try:
            req = RunCreate.model_validate(
                {**kwargs, "assistant_id": row.assistant_id, "metadata": row.metadata}
            )
        except Exception as exc:
            problem = f"cannot run: {exc}"
        if assistant is None or thread is None:
            problem = "cannot run: assistant or thread gone"
        if problem is not None or req is None or assistant is None or thread is None:
            error: RunError = {"error": "RunUnavailable", "message": problem or "cannot run"}
            await self.host.settle_orphan(row, status="error", error=error)
            await self._close_log(row.run_id, row.thread_id, error)
            return None
        snapshot = self.settings
        return Job(
            run=row,
            request=req,
            assistant=assistant,
            config=snapshot.current,
            config_version=snapshot.version,
            temporary=bool(kwargs.get("temporary")),
            resume=resume,
            thread_metadata=dict(thread.metadata),
            owner_id=row.owner_id or LOCAL_PRINCIPAL.identity,
            principal=principal_from_record(row.principal, row.owner_id),
            attempt=attempt,
        )

    # -- settling ------------------------------------------------------------------------
    def finished(self, job: Job) -> None:
        """A run executed (or settled) here has ended: its slot is free, and its thread's
        next run (when the settle saw one) may be claimable now. This replica claims again
        when that can find something: its thread has a next run, a claim found no free slot
        here since the last pass, or the run freed room under a cluster-wide cap. The
        others are told when they may claim what this one cannot (it stops claiming or has
        no free slot) or when a cluster-wide cap has room again."""
        self.leases.drop(job.run_id)
        caps = self.caps()
        shared = caps.total is not None or caps.per_user is not None
        if self.claiming and (job.more_on_thread or self._starved or shared):
            self.claims.wake()
        cannot_claim = not self.claiming or self.free_slots() <= 0
        if shared or (job.more_on_thread and cannot_claim):
            self.tell_others()

    async def _recovered(self, found: list[run_claims.Recovered]) -> None:
        for item in found:
            if not item.requeued and item.error is not None:
                await self._close_log(item.run_id, item.thread_id, item.error)
        self.notify()

    async def _close_log(self, run_id: str, thread_id: str, error: JsonObject) -> None:
        """End a settled run's log (its error event, then the close marker) so followers
        on every replica end."""
        try:
            await self.broker.open_run(run_id, thread_id, resume=True)
            await self.broker.publish(run_id, "error", dumps(error))
            await self.broker.close_run(run_id)
        except (DomainError, KeyError):
            log.warning("a recovered run's log was not closed (followers end on its status)")

    # -- shutdown ------------------------------------------------------------------------
    async def stop(self) -> None:
        """Claim nothing more; hand claimed runs that have not started back to the queue."""
        self.claiming = False
        await self.claims.aclose()
        owner = self.owner
        for job in self.jobs.snapshot():
            if job.started or job.fence is None or job.cancel_action is not None:
                continue
            fence = job.fence
            back = await self.db.write(
                lambda c, rid=job.run_id, f=fence: run_claims.release(c, rid, owner=owner, fence=f)
            )
            if back:
                job.state.lose_lease()  # nothing more is written for it here
                job.interrupt("shutdown")
        if self._handles:
            with contextlib.suppress(DomainError):
                await self.control.send(BROADCAST, self.work)

    async def aclose(self) -> None:
        await self.leases.aclose()
        for task in list(self._followers.values()):
            task.cancel()
        await asyncio.gather(*self._followers.values(), *self._background, return_exceptions=True)
        self._followers.clear()
