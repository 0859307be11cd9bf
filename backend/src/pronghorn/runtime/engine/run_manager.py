"""The RunManager: accepts runs, orders them per thread, caps concurrency, cancels them,
and answers questions about them. Execution itself lives in executor.py.

One engine for one process and for a cluster of replicas: ordering, limits, claims,
leases and followers are the run queue's (run_queue.py), given to it when it is built —
`LocalRunQueue` (runs on one thread execute one at a time, in creation order; across
threads a FIFO limiter caps how many execute at once; both waits show as status `pending`)
or `ClusterRunQueue` (PostgreSQL + Redis: runs go through the database queue, which any
replica claims from). A run is committed to the database before `create` returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import cast

from sqlalchemy import Connection

from pronghorn.auth.authorizer import AllowAll, Authorizer
from pronghorn.auth.principal import LOCAL_PRINCIPAL
from pronghorn.config.schema.app import AppConfig
from pronghorn.persistence.errors import QueueFull, RecordError
from pronghorn.persistence.json_codec import json_loads
from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos import assistants as assistants_repo
from pronghorn.persistence.repos import run_units
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.repos.common import OwnerScope, new_id
from pronghorn.runtime.access import Access, principal_from_record, principal_record
from pronghorn.runtime.engine.admission import Admission
from pronghorn.runtime.engine.admission import queue_timeout_error as timeout_error
from pronghorn.runtime.engine.control import ControlBus, ControlMessage, LocalControlBus
from pronghorn.runtime.engine.executor import Executor
from pronghorn.runtime.engine.graph_access import require_graph
from pronghorn.runtime.engine.job_table import JobTable
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.remote_run import RemoteRun
from pronghorn.runtime.engine.run_queue import RunQueue
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.engine.run_state import FINAL_STATUSES, RunError, cancel_action
from pronghorn.runtime.engine.run_thread import new_thread_metadata
from pronghorn.runtime.engine.thread_turns import ThreadTurns
from pronghorn.runtime.errors import (
    Conflict,
    DomainError,
    InvalidRequest,
    NotFound,
    Unavailable,
    domain_error,
)
from pronghorn.runtime.observability.metrics import Metrics
from pronghorn.runtime.owned import authorize_with

log = logging.getLogger("pronghorn.runs")

RunValidator = Callable[[RunCreate, AssistantRecord], None]


def final_status(status: str) -> str:
    """A run's status label for the runs counter (a run that never settled is an error)."""
    return status if status in FINAL_STATUSES else "error"


def queue_timeout_error(job: Job) -> RunError:
    return timeout_error(job.config.runs.max_queue_wait_s or 0)


class RunManager:
    def __init__(
        self,
        executor: Executor,
        jobs: JobTable,
        queue: RunQueue,
        *,
        admission: Admission,
        turns: ThreadTurns,
        authorizer: Authorizer | None = None,
        metrics: Metrics | None = None,
        control: ControlBus | None = None,
        validators: Sequence[RunValidator] = (),
    ) -> None:
        self.ex = executor
        self.queue = queue
        # Cancels of runs another process executes travel on it (runtime/engine/control.py).
        self.control: ControlBus = control or LocalControlBus()
        self.authorizer: Authorizer = authorizer or AllowAll()
        self.db = executor.db
        self.broker = executor.broker
        self.owner = executor.db.replica_id  # on its PostgreSQL sessions too
        self.metrics = metrics
        # Queue caps, per-user and global slots (runtime/engine/admission.py), shared with the queue
        self.admission = admission
        self._jobs = jobs  # shared with the executor, which asks it about queued runs
        self._turns = turns  # whose turn it is on each thread here (thread_turns.py)
        self._accepting = True
        self.validators = tuple(validators)
        self._background: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        """Start the queue's background work (scale-out: claiming, heartbeats, the lease
        sweeper)."""
        self.queue.start(self)

    # -- queries ---------------------------------------------------------------------
    def active(self, run_id: str) -> Job | None:
        return self._jobs.get(run_id)

    def _inflight_known(self, thread_id: str) -> list[RunRecord] | None:
        """Unfinished runs of a thread, when this process knows them: on SQLite every run of
        a thread belongs to this process and every write is serialised, so memory is
        authoritative (called from the database thread: of_thread works on a snapshot);
        None elsewhere: the accept reads them under the thread's row lock."""
        if self.db.is_sqlite:
            return [j.run for j in self._jobs.of_thread(thread_id)]
        return None

    @property
    def in_memory(self) -> int:
        return len(self._jobs)

    def overlay(self, run: RunRecord) -> RunRecord:
        """A stored run with the live status of this process (rows may lag by one write)."""
        job = self._jobs.get(run.run_id)
        if job is not None and run.status in ("pending", "running"):
            return dataclasses.replace(run, status=job.status)
        return run

    def on_config_change(self, old: AppConfig, new: AppConfig) -> None:
        self.admission.resize(new.runs)

    # -- create ----------------------------------------------------------------------
    def _check(self, req: RunCreate, assistant: AssistantRecord) -> None:
        require_graph(self.ex.graphs, assistant.graph_id)
        for validate in self.validators:
            validate(req, assistant)

    async def precheck(self, req: RunCreate, access: Access) -> None:
        """Every check ``create`` makes before writing, without writing: a batch checks all
        its runs first, so one bad run leaves nothing created."""
        assistant = await self.db.read(
            lambda conn: assistants_repo.resolve_assistant(
                conn, req.assistant_id, owner_scope=access.owner_scope
            )
        )
        if assistant is None:
            raise NotFound.of("Assistant", req.assistant_id)
        self._check(req, assistant)

    async def check_room(self, access: Access, count: int) -> None:
        """Admission for a batch of `count` stateless runs, before any is created (scale-out:
        against the cluster's queue)."""
        await self.queue.check_room(access.identity, count)

    async def _ownership(
        self, thread_id: str | None, req: RunCreate, access: Access
    ) -> run_units.RunOwnership:
        """Authorize the run as `threads.create_run` (the authorizer may stamp its
        metadata) and say whose thread and assistant it may use."""
        value: dict[str, object] = {
            **req.kwargs(),
            "thread_id": thread_id,
            "assistant_id": req.assistant_id,
            "metadata": dict(req.metadata or {}),
            "multitask_strategy": req.multitask_strategy,
            "if_not_exists": req.if_not_exists,
            "after_seconds": req.after_seconds,
        }
        filt = await authorize_with(self.authorizer, access, "threads", "create_run", value)
        stamped = json_object(value.get("metadata"))
        if stamped is not None:
            req.metadata = dict(stamped)
        return run_units.RunOwnership(
            owner_id=access.identity,
            principal=principal_record(access.principal),
            thread_scope=OwnerScope(access.owner_scope, filt),
        )

    async def create(self, thread_id: str | None, req: RunCreate, access: Access) -> Job:
        """Accept a run for `access`'s principal: on its own thread (another user's thread
        is missing), or stateless (a new thread of its own); it executes as that principal."""
        if not self._accepting:
            raise Unavailable("The server is shutting down; retry shortly")
        ownership = await self._ownership(thread_id, req, access)
        stateless = thread_id is None
        new_thread = (
            None
            if thread_id is None
            else await new_thread_metadata(self.db, self.authorizer, access, thread_id, req)
        )
        # The config the run is accepted under (and will execute with), taken before any await.
        snapshot, version = self.ex.settings.current, self.ex.settings.version
        run_id = new_id()
        tid = thread_id or new_id()

        kwargs = req.kwargs()
        kwargs["temporary"] = stateless
        # Admission: refuse before anything is written; from here the run holds its place.
        # Scale-out the queue caps count the cluster's queue, in the accept transaction.
        self.queue.admit(access.identity, tid)
        self.admission.enter(access.identity)
        terms = self.queue.terms(req, tid)

        def unit(conn: Connection) -> tuple[AssistantRecord, run_units.Accepted]:
            found = run_units.resolve_for_accept(conn, req.assistant_id, access.owner_scope, tid)
            self._check(req, found.assistant)
            return found.assistant, run_units.accept_resolved(
                conn,
                found,
                thread_id=tid,
                create_thread=stateless or new_thread is not None,
                new_thread_metadata=new_thread or {},
                inflight_known=self._inflight_known(tid),
                reject_if_busy=req.multitask_strategy == "reject",
                run_fields={
                    "run_id": run_id,
                    "kwargs": kwargs,
                    "metadata": req.metadata or {},
                    "multitask_strategy": req.multitask_strategy,
                    "temporary": stateless,
                    # Scale-out: nobody's until claimed (claim_if_idle, or a replica's queue)
                    "owner": terms.owner,
                    "claimable_at": terms.claimable_at,
                },
                ownership=ownership,
                claim_if_idle=terms.claim_if_idle,
                queue_caps=terms.queue_caps,
            )

        # The run's log first: a broker that cannot be reached fails the request (503)
        # before anything is written; a request the unit refuses closes it again. Scale-out,
        # the replica that executes the run opens its log (it may be another one).
        try:
            await self.queue.open_log(run_id, tid)
            try:
                assistant, accepted = await self.db.retry(lambda: self.db.write(unit))
            except QueueFull as full:
                self.admission.refuse(full)
            except RecordError as exc:
                raise domain_error(exc) from None
        except BaseException:
            self.queue.release(terms)
            self.admission.leave(access.identity)
            await self.queue.abandon_log(run_id)
            raise
        self.queue.release(terms)
        run, inflight = accepted.run, accepted.inflight
        thread_meta = accepted.thread_metadata
        job = Job(
            run=run,
            request=req,
            assistant=assistant,
            config=snapshot,
            config_version=version,
            graph=self.ex.graphs.serving(assistant.graph_id),
            temporary=stateless,
            thread_metadata=thread_meta,
            owner_id=accepted.owner_id or access.identity,
            principal=access.principal,
        )
        here = self.queue.accepted(job, accepted.claimed)
        try:
            if here:
                await self._start(job)
        except BaseException:
            if job.task is None:  # its task never began: it holds no place any more
                self.admission.leave(access.identity)
                self.queue.not_started(job)
            raise
        if inflight and req.multitask_strategy in ("interrupt", "rollback"):
            for other in inflight:
                with contextlib.suppress(DomainError):
                    await self.cancel(tid, other.run_id, action=req.multitask_strategy)
        return job

    async def start_job(self, job: Job) -> None:
        await self._start(job)

    async def _start(self, job: Job) -> None:
        self._jobs.add(job)
        # A resumed run (attempt > 1) continues the ids its first attempt stored; a claimed
        # one's events are stored only while its claim (fence) holds.
        await self.broker.open_run(
            job.run_id, job.thread_id, resume=job.attempt > 1, fence=job.fence
        )
        await self.ex.emit(job, "metadata", {"run_id": job.run_id, "attempt": job.attempt})
        tail: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        prev = self.queue.order(job.thread_id, tail)
        job.state.task = asyncio.create_task(self._run(job, prev, tail), name=f"run-{job.run_id}")

    async def _run(
        self, job: Job, prev: asyncio.Future[None] | None, tail: asyncio.Future[None]
    ) -> None:
        user = job.principal.identity
        held = contextlib.AsyncExitStack()  # the run's slots, once it has them
        try:
            try:
                job.state.begin_waiting()  # a cancel may now interrupt the waits below
                if job.cancel_action is not None:  # cancelled before this task began
                    raise asyncio.CancelledError
                await self.queue.delay(job)
                waiting_since = time.monotonic()
                async with asyncio.timeout(job.config.runs.max_queue_wait_s):
                    if prev is not None and not prev.done():
                        await asyncio.shield(prev)
                    await held.enter_async_context(self.admission.slots(user))
            except asyncio.CancelledError:
                self.admission.leave(user)
                await self.ex.finish_unstarted(job)
                return
            except TimeoutError:
                self.admission.leave(user)
                await self.ex.finish_expired(job, queue_timeout_error(job))
                return
            self.admission.started(user, time.monotonic() - waiting_since)
            job.state.begin_starting()
            began = time.monotonic()
            try:
                await self.ex.execute(job)
            finally:
                self.admission.finished(user, time.monotonic() - began)
        except Exception:  # the executor records failures itself; this is a last resort
            log.exception("run task failed", extra={"run_id": job.run_id})
        finally:
            await held.aclose()
            if self.metrics is not None:
                self.metrics.runs_total.labels(final_status(job.status)).inc()
            self._turns.end(job.thread_id, tail)
            self._jobs.remove(job.run_id)
            self.queue.finished(job)
            job.done.set()

    # -- cancel ----------------------------------------------------------------------
    async def cancel(
        self, thread_id: str | None, run_id: str, *, action: str = "interrupt", wait: bool = False
    ) -> Job | None:
        try:
            act = cancel_action(action)
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from None
        job = self._jobs.get(run_id)
        if job is None or (thread_id is not None and job.thread_id != thread_id):
            row = await self.db.write(lambda c: run_units.get_run(c, run_id, thread_id))
            if row is None:
                raise NotFound.of("Run", run_id)
            if row.status in runs_repo.INFLIGHT and await self.cancel_elsewhere(
                run_id, action, wait
            ):
                return None
            if row.status in runs_repo.INFLIGHT and await self.queue.cancel_queued(
                run_id, act, wait
            ):
                return None
            if row.status in runs_repo.INFLIGHT:
                # Owned by no live task here (a dead process): settle it directly.
                await self.ex.settle_orphan(
                    row, status="interrupted", error=None, cancel_reason=action
                )
                return None
            if row.status == "interrupted":
                return None  # already cancelled: cancelling again is a no-op
            raise Conflict(f"Run {run_id} already finished with status {row.status!r}")
        job.interrupt(act)
        if wait:
            await job.done.wait()
        return job

    async def cancel_elsewhere(self, run_id: str, action: str, wait: bool) -> bool:
        """Ask the process executing the run to cancel it (and, with `wait`, wait until the
        run has ended); False when no live process executes it."""
        found = await self.db.write(lambda c: run_units.run_status_owner(c, run_id))
        if found is None or found[0] not in runs_repo.INFLIGHT:
            return found is not None  # it ended meanwhile: nothing to settle
        owner = found[1]
        if owner is None or owner == self.owner:
            return False
        if not await self.control.send(owner, ControlMessage("cancel", run_id, action)):
            return False
        if wait:
            await self.wait_elsewhere(run_id)
        return True

    async def wait_elsewhere(self, run_id: str) -> bytes | None:
        """Return once a run another process executes has ended (its log closes): its
        output as JSON when the end carried it (None: read it from the database)."""
        return await self.broker.ended(run_id)

    def follow_elsewhere(self, thread_id: str, run_id: str) -> RemoteRun:
        """A run this process does not execute (another one does): done with its output
        once it has ended."""
        remote = RemoteRun(run_id, thread_id)

        async def follow() -> None:
            try:
                result = await self.wait_elsewhere(run_id)
                if result is not None:  # what the executing process answers a local join
                    remote.output = json_loads(result)
                else:
                    remote.output = await self.output(thread_id, run_id)
            except DomainError as exc:  # the broker or the run went away meanwhile
                remote.output = {"__error__": {"error": type(exc).__name__, "message": exc.message}}
            finally:
                remote.done.set()

        remote.task = asyncio.create_task(follow(), name=f"follow-{run_id}")
        self._background.add(remote.task)
        remote.task.add_done_callback(self._background.discard)
        return remote

    def on_control(self, message: ControlMessage) -> None:
        """A signal from another process about a run this one executes."""
        if message.kind == "work":
            self.queue.heard(message)
            return
        job = self._jobs.get(message.run_id)
        if message.kind == "cancel" and job is not None:
            try:
                job.interrupt(cancel_action(message.action))
            except ValueError:
                log.warning("a cancel with an unknown action was ignored: %s", message.action)

    def cancel_soon(self, thread_id: str, run_id: str) -> None:
        """Cancel from a context that cannot await (a client that went away)."""
        task = asyncio.create_task(self._cancel_quietly(thread_id, run_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _cancel_quietly(self, thread_id: str, run_id: str) -> None:
        with contextlib.suppress(DomainError):
            await self.cancel(thread_id, run_id, action="interrupt")

    async def cancel_many(
        self,
        *,
        thread_id: str | None,
        run_ids: list[str] | None,
        status: str | None,
        action: str,
        owner_id: str | None = None,
    ) -> int:
        """Cancel the matching unfinished runs (of `owner_id` only, when given)."""
        rows = await self.db.read(
            lambda conn: runs_repo.select_for_cancel(
                conn, thread_id=thread_id, run_ids=run_ids, status=status, owner_id=owner_id
            )
        )
        for row in rows:
            with contextlib.suppress(DomainError):
                await self.cancel(row.thread_id, row.run_id, action=action)
        return len(rows)

    async def cancel_assistant(self, assistant_id: str) -> int:
        """Interrupt every unfinished run of an assistant (it is being deleted) and wait
        until they have settled; how many there were."""
        rows = await self.db.read(
            lambda conn: runs_repo.select_for_cancel(
                conn, thread_id=None, run_ids=None, status=None, assistant_id=assistant_id
            )
        )
        for row in rows:
            with contextlib.suppress(DomainError):
                await self.cancel(row.thread_id, row.run_id, action="interrupt")
        for job in [j for j in self._jobs.snapshot() if j.assistant.assistant_id == assistant_id]:
            await job.done.wait()
        return len(rows)

    async def cancel_thread(self, thread_id: str) -> None:
        """Stop everything on a thread (before it is deleted) and wait for it."""
        jobs = self._jobs.of_thread(thread_id)
        for job in jobs:
            await self.cancel(thread_id, job.run_id, action="interrupt")
        if not self.db.is_sqlite or not isinstance(self.control, LocalControlBus):
            # Runs of the thread another process executes: cancelled there, waited for.
            mine = {j.run_id for j in jobs}
            rows = await self.db.read(
                lambda conn: runs_repo.select_for_cancel(
                    conn, thread_id=thread_id, run_ids=None, status=None
                )
            )
            for row in rows:
                if row.run_id not in mine:
                    with contextlib.suppress(DomainError):
                        await self.cancel(thread_id, row.run_id, action="interrupt", wait=True)
        for job in jobs:
            await job.done.wait()
        await self.broker.drop_thread(thread_id)

    # -- results ---------------------------------------------------------------------
    async def output(self, thread_id: str, run_id: str) -> object:
        """What /join returns for a run that is no longer in memory."""
        run = await self.db.write(lambda c: run_units.get_run(c, run_id, thread_id))
        if run is None:
            raise NotFound.of("Run", run_id)
        thread = await self.db.read(lambda conn: threads_repo.get_row(conn, thread_id))
        if run.status in ("error", "timeout") and run.error:
            return {"__error__": run.error}
        state = thread.values if thread is not None else None
        values: dict[str, object] = dict(json_object(state) or {})
        by_task: Mapping[str, object] = thread.interrupts if thread is not None else {}
        # each task's interrupts: a list (the column as the run's settle wrote it)
        interrupts = [i for items in by_task.values() for i in cast("list[object]", items)]
        if interrupts:
            values["__interrupt__"] = interrupts
        return values

    # -- lifecycle -------------------------------------------------------------------
    async def recover(self) -> None:
        """Runs left pending/running by a dead process: error them, or resume them."""
        orphans = await self.db.read(lambda conn: runs_repo.inflight_all(conn))
        if not orphans:
            return
        orphans = [
            row for row in self.queue.orphans(orphans) if not await self._owner_alive(row.owner)
        ]
        if not orphans:
            return
        mode = self.ex.settings.current.runs.recover
        log.warning("recovering runs left in flight", extra={"count": len(orphans), "mode": mode})
        for row in orphans:
            if mode == "resume":
                await self._resume(row)
            else:
                await self.ex.settle_orphan(
                    row,
                    status="error",
                    error={
                        "error": "ServerRestart",
                        "message": "The server stopped while this run was in flight; "
                        "it was not resumed (runs.recover: error).",
                    },
                    cancel_reason=None,
                )

    async def _owner_alive(self, owner: str | None) -> bool:
        """Whether another live process executes runs as `owner` (then they are not
        orphans). Unknown (the control bus is down) counts as alive: never settle a run
        that may be executing."""
        if owner is None or owner == self.owner:
            return False
        try:
            return await self.control.alive(owner)
        except DomainError:
            log.warning("cannot tell whether a run's process is alive; left as is")
            return True

    async def _resume(self, row: RunRecord) -> None:
        assistant, thread = await self.db.read(
            lambda c: (
                assistants_repo.get(c, row.assistant_id),
                threads_repo.get_row(c, row.thread_id),
            )
        )
        kwargs = dict(row.kwargs)
        try:
            req = RunCreate.model_validate(
                {**kwargs, "assistant_id": row.assistant_id, "metadata": row.metadata}
            )
        except Exception as exc:
            await self.ex.settle_orphan(
                row,
                status="error",
                cancel_reason=None,
                error={"error": "ServerRestart", "message": f"cannot resume run: {exc}"},
            )
            return
        if assistant is None or thread is None:
            await self.ex.settle_orphan(
                row,
                status="error",
                cancel_reason=None,
                error={
                    "error": "ServerRestart",
                    "message": "cannot resume: assistant or thread gone",
                },
            )
            return
        await self.db.write(lambda conn: runs_repo.take_for_resume(conn, row.run_id, self.owner))
        job = Job(
            run=row,
            request=req,
            assistant=assistant,
            config=self.ex.settings.current,
            config_version=self.ex.settings.version,
            temporary=bool(kwargs.get("temporary")),
            resume=await self.wrote_checkpoint(row.thread_id, row.run_id),
            thread_metadata=dict(thread.metadata),
            owner_id=row.owner_id or LOCAL_PRINCIPAL.identity,
            principal=principal_from_record(row.principal, row.owner_id),
            attempt=2,
        )
        self.admission.enter(job.principal.identity)
        await self._start(job)

    async def settle_orphan(self, row: RunRecord, *, status: str, error: RunError | None) -> None:
        """Settle a run no live task executes (it cannot run, or its process died)."""
        await self.ex.settle_orphan(row, status=status, error=error, cancel_reason=None)

    async def wrote_checkpoint(self, thread_id: str, run_id: str) -> bool:
        """Whether the thread's latest checkpoint is this run's: then it continues from
        there; otherwise (it never checkpointed, e.g. durability `exit`) it starts over."""
        latest = await self.ex.checkpointer.aget_tuple(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        )
        if latest is None:
            return False
        metadata: Mapping[str, object] = latest.metadata or {}
        return metadata.get("run_id") == run_id

    async def shutdown(self, drain_timeout: float) -> None:
        """Stop accepting; let in-flight runs finish within the bound; interrupt the rest.
        Scale-out: claim nothing more first, and hand claimed runs not yet started back."""
        self._accepting = False
        await self.queue.stop()
        jobs = self._jobs.snapshot()
        if jobs:
            log.info("draining runs", extra={"count": len(jobs)})
            await asyncio.wait(
                [asyncio.ensure_future(j.done.wait()) for j in jobs], timeout=drain_timeout
            )
        left = self._jobs.snapshot()
        for job in left:
            job.interrupt("shutdown")
        if left:
            await asyncio.wait([asyncio.ensure_future(j.done.wait()) for j in left], timeout=10)
        # Still not done: their settle waits for an unreachable database (runs.settle_wait_s).
        # Shutdown ends the wait; the run stays `running` in the database, and the next start
        # (or, in a cluster, the lease sweeper) recovers it with runs.recover.
        stuck = [j for j in self._jobs.snapshot() if j.task is not None and not j.task.done()]
        for job in stuck:
            log.warning("shutdown ends a run's wait for the database", extra={"run_id": job.run_id})
            assert job.task is not None
            job.task.cancel()
        if stuck:
            await asyncio.wait([asyncio.ensure_future(j.done.wait()) for j in stuck], timeout=10)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ex.drain(), timeout=10)
        await self.queue.aclose()

    # -- thread turns ------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def thread_turn(
        self, thread_id: str, *, busy: Callable[[str], Exception]
    ) -> AsyncGenerator[None, None]:
        """Hold the thread's place in its run order for the block (a state update): raise
        ``busy(run_id)`` if a run of the thread is in flight here; otherwise runs created
        meanwhile wait (pending) until the block exits. Check and claim happen in one step
        of the event loop, so no run can start in between. Scale-out, the other replicas
        learn of it from the thread's turn in the database (`thread_state.idle_turn`); its
        end wakes every replica's queue for the runs queued behind it."""
        for job in self._jobs.snapshot():
            if job.thread_id == thread_id:
                raise busy(job.run_id)
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._turns.take(thread_id, turn)
        try:
            yield
        finally:
            self._turns.end(thread_id, turn)
            self.queue.turn_ended(thread_id)
