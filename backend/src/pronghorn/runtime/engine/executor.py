"""Executes one run: builds its config and input, streams the graph into the event log,
enforces the timeout, and settles the run and its thread in one transaction."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any, Literal, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Send, StateSnapshot
from sqlalchemy import Connection

from pronghorn.config.holder import ConfigHolder
from pronghorn.graphs.registry import GraphRegistry
from pronghorn.graphs.requests import GraphRequest
from pronghorn.persistence.db import Database
from pronghorn.persistence.outage import (
    OutageOutlasted,
    is_database_unreachable,
    outlast_outage,
)
from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos import run_units
from pronghorn.runtime.access import graph_user
from pronghorn.runtime.engine.direct_events import DirectEvents
from pronghorn.runtime.engine.fence import LeaseLost, RunFence
from pronghorn.runtime.engine.graph_stream import StreamedState, stream_graph
from pronghorn.runtime.engine.job_table import JobTable
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.run_hooks import RunHooks
from pronghorn.runtime.engine.run_state import RunError, RunStatus
from pronghorn.runtime.engine.state import (
    CachedInterrupts,
    cached_values,
    thread_values_and_interrupts,
)
from pronghorn.runtime.engine.usage import UsageCounter
from pronghorn.runtime.engine.webhook import WebhookSender
from pronghorn.runtime.events.broker import BrokerUnavailable, EventBroker
from pronghorn.runtime.events.serialization import dumps, to_jsonable
from pronghorn.runtime.observability.log_context import run_id_var
from pronghorn.runtime.observability.trace_vendors import vendor_metadata
from pronghorn.runtime.record_api import run_api
from pronghorn.sandbox.paths import user_folder

log = logging.getLogger("pronghorn.runs")


def _goto(value: object) -> object:
    """A command's ``goto`` with each ``{node, input}`` object as a ``Send``."""
    if isinstance(value, list):
        return [_goto(v) for v in cast("list[object]", value)]
    send = json_object(value)
    if send is None or "node" not in send:
        return value
    # Any: the client's node name, passed on as sent (LangGraph fails a goto to an unknown node)
    node: Any = send["node"]
    return Send(node, send.get("input"))


def _update(value: object) -> object:
    """A command's ``update``: a list's ``[key, value]`` pairs as tuples."""
    if not isinstance(value, list):
        return value
    items = cast("list[object]", value)
    return [tuple(cast("list[object]", u)) if isinstance(u, list) else u for u in items]


def build_input(job: Job) -> object:
    """The run's graph input: its ``input``, its ``command`` as a LangGraph ``Command``, or
    None to continue from the last checkpoint (a resumed run)."""
    req = job.request
    if job.resume:
        return None
    if req.command is not None:
        cmd = req.command
        # Any: Command's keywords, as the client sent them (LangGraph checks their shapes)
        kwargs: dict[str, Any] = {}
        if cmd.resume is not None:
            kwargs["resume"] = cmd.resume
        if cmd.update is not None:
            kwargs["update"] = _update(cmd.update)
        if cmd.goto is not None:
            kwargs["goto"] = _goto(cmd.goto)
        return Command(**kwargs)
    return req.input


CHECKPOINT_KEYS = ("checkpoint_id", "checkpoint_ns", "checkpoint_map")
"""The only keys a run body's ``checkpoint`` may set; thread and user are the server's."""


def _client_configurable(cfg: JsonObject) -> dict[str, object]:
    """A client's ``configurable`` without LangGraph's internal (``__``-prefixed) keys."""
    raw = json_object(cfg.get("configurable") or {})
    if raw is None:
        return {}
    return {k: v for k, v in raw.items() if not k.startswith("__")}


def _tags(cfg: JsonObject) -> list[str]:
    tags: object = cfg.get("tags") or []
    return cast("list[str]", tags)  # the client's tags, passed on as sent (LangChain's strings)


def _object(cfg: JsonObject, key: str) -> JsonObject:
    """``cfg[key]`` as an object (``{}`` when absent or empty)."""
    return json_object(cfg.get(key) or {}) or {}


def build_context(job: Job) -> dict[str, object]:
    """The run's context: the assistant's, then the request's over it. Always a dict, `{}`
    without one: LangGraph then fills a context_schema's defaults."""
    return {**job.assistant.context, **(job.request.context or {})}


def build_config(job: Job, callbacks: list[BaseCallbackHandler]) -> RunnableConfig:
    req = job.request
    a_cfg = job.assistant.config
    r_cfg: JsonObject = req.config or {}
    configurable = {**_client_configurable(a_cfg), **_client_configurable(r_cfg)}
    if req.checkpoint:
        configurable.update(
            {k: req.checkpoint[k] for k in CHECKPOINT_KEYS if req.checkpoint.get(k) is not None}
        )
    if req.checkpoint_id:
        configurable["checkpoint_id"] = req.checkpoint_id
    if job.resume:
        configurable.pop("checkpoint_id", None)
    # Identity last: nothing from the request or the assistant can address another thread
    # or user (their files, checkpoints and queue). `user_id` names the owner's folder (the
    # sandbox and the files API agree on it); the `langgraph_auth_*` keys are who the run
    # executes as, as the LangGraph server passes them.
    user_folder_id = user_folder(job.owner_id)
    configurable.update(
        thread_id=job.thread_id,
        run_id=job.run_id,
        assistant_id=job.assistant.assistant_id,
        graph_id=job.assistant.graph_id,
        user_id=user_folder_id,
        langgraph_auth_user=job.principal.auth_user(),
        langgraph_auth_user_id=job.principal.identity,
        langgraph_auth_permissions=list(job.principal.permissions),
    )
    metadata: dict[str, object] = {
        **(job.thread_metadata or {}),
        **_object(a_cfg, "metadata"),
        **_object(r_cfg, "metadata"),
        **(req.metadata or {}),
        "run_id": job.run_id,
        "thread_id": job.thread_id,
        "assistant_id": job.assistant.assistant_id,
        "graph_id": job.assistant.graph_id,
        "run_attempt": job.attempt,
        "user_id": user_folder_id,
    }
    if job.config.tracing.langfuse is not None:
        metadata.update(vendor_metadata(job))
    config: RunnableConfig = {
        "configurable": configurable,
        "metadata": metadata,
        "tags": list(dict.fromkeys([*_tags(a_cfg), *_tags(r_cfg)])),
        "callbacks": callbacks,
    }
    limit = r_cfg.get("recursion_limit") or a_cfg.get("recursion_limit")
    if limit:
        # a client's number (or numeric string): int() raises for anything else, as before
        config["recursion_limit"] = int(cast("int | str", limit))
    return config


Outcome = Literal["success", "error", "interrupted", "timeout", "rollback"]
"""How a run ended, as the executor settles it (`rollback`: interrupted, its row deleted)."""


def _cancelled_status(job: Job) -> Outcome:
    return "rollback" if job.cancel_action == "rollback" else "interrupted"


def _recorded_status(status: Outcome) -> RunStatus:
    """The status a run ends with: a rollback is recorded as `interrupted` (and its run row
    then deleted, in the same unit)."""
    return "interrupted" if status == "rollback" else status


def database_unavailable(job: Job, exc: BaseException | None) -> RunError:
    """The error of a run the database's absence ended: ``exc``, what its execution met
    (None: the run ended, but its outcome could not be recorded in time)."""
    wait_s = job.config.runs.settle_wait_s
    if exc is None or isinstance(exc, OutageOutlasted):
        what = "its checkpoints" if exc is not None else "its outcome"
        message = (
            f"The database was unreachable for more than {wait_s:g}s (runs.settle_wait_s): "
            f"{what} could not be recorded."
        )
    else:
        message = f"The database was unreachable while the run executed: {exc}"
    return {"error": "DatabaseUnavailable", "message": message}


def durability_of(job: Job) -> str:
    req = job.request
    if req.durability:
        return req.durability
    if req.checkpoint_during is False:
        return "exit"
    return job.config.runs.durability


class Executor:
    def __init__(
        self,
        *,
        db: Database,
        graphs: GraphRegistry,
        broker: EventBroker,
        checkpointer: BaseCheckpointSaver[str],
        settings: ConfigHolder,
        webhooks: WebhookSender,
        jobs: JobTable,
        hooks: RunHooks = RunHooks(),
        leases: RunFence | None = None,
        thread_deleter: Callable[[str], Coroutine[object, object, None]] | None = None,
    ) -> None:
        self.db = db
        self.graphs = graphs
        self.broker = broker
        self.checkpointer = checkpointer
        self.settings = settings
        self.webhooks = webhooks
        self.thread_deleter = thread_deleter  # deletes a stateless run's thread
        self.background: set[asyncio.Task[None]] = set()  # those deletions, under way
        # The runs of this process (the run manager adds them): on SQLite every run of a
        # thread belongs to this process, so whether another is to come is answered here.
        self.jobs = jobs
        # Callbacks, scopes and watchers around each run (run_hooks.py)
        self.hooks = hooks
        # Scale-out: the leases of claimed runs, the fence of every write (a run that lost
        # its lease writes nothing)
        self.leases = leases

    async def emit(self, job: Job, event: str, data: object) -> None:
        if job.fence is not None and self.leases is not None:
            if job.lease_lost:
                raise LeaseLost(job.run_id)
            await self.leases.check(job)
        await self.broker.publish(job.run_id, event, dumps(data))

    async def execute(self, job: Job) -> None:
        token = run_id_var.set(job.run_id)
        try:
            with contextlib.ExitStack() as scopes:
                for scope in self.hooks.scopes:
                    scopes.enter_context(scope(job))
                await self._execute(job)
        finally:
            run_id_var.reset(token)

    async def _execute(self, job: Job) -> None:
        fence = None
        if job.fence is not None and self.leases is not None:
            fence = (self.leases.owner, job.fence)

        if job.cancel_action is not None:
            await self.finish_unstarted(job)
            return
        started_at = datetime.now(UTC)
        # Persist `running` with the run's next batch of events (within the event writer's
        # interval) instead of in a transaction of its own: readers in this process see the
        # live status from memory; a run that ends first has it written by its settle.
        mark = run_units.StartMark(job.run_id, started_at, fence)
        self.broker.write_later(mark)
        job.state.begin_running(mark)
        usage = UsageCounter()
        timeout = job.config.runs.timeout_s
        streamed = StreamedState()
        async with contextlib.AsyncExitStack() as watchers:
            for watch in self.hooks.watchers:
                await watchers.enter_async_context(watch(job))
            stream = asyncio.create_task(
                self._stream(job, usage, timeout, streamed), name=f"stream-{job.run_id}"
            )
            job.state.begin_streaming(stream)
            if job.cancel_action is not None:  # asked while the watchers started
                stream.cancel()
            await asyncio.wait([stream])
            job.state.begin_finishing()
        status: Outcome = "success"
        error: RunError | None = None
        if stream.cancelled():
            status = _cancelled_status(job)  # cancel() set the action while we awaited
        elif (exc := stream.exception()) is not None:
            if isinstance(exc, LeaseLost):
                job.state.lose_lease()
            if isinstance(exc, TimeoutError):
                status = "timeout"
                error = {"error": "TimeoutError", "message": f"Run exceeded its {timeout:g}s limit"}
            elif is_database_unreachable(exc):
                status, error = "error", database_unavailable(job, exc)
                log.warning("run failed: %s", error["message"])
            else:
                status = "error"
                # An error may name itself for the run (budget_exceeded); else its type.
                code = getattr(exc, "run_error_code", None)
                name = code if isinstance(code, str) and code else type(exc).__name__
                error = {"error": name, "message": str(exc)}
                log.warning("run failed", extra={"error": error["error"], "detail": str(exc)[:500]})
        job.state.stream_ended()
        if job.lease_lost:
            self._fenced(job)
            return
        if error is not None:
            await self._emit_error(job, error)
        final = streamed.final_values if status == "success" else None
        await self._settle(job, status, error, usage.as_dict(), started_at, final)

    async def _emit_error(self, job: Job, error: RunError) -> None:
        """The run's error event. When its lease cannot be proven because the database is
        away, it is published anyway: the event store keeps only the events of the run's
        current claim (its fence), and the settle is fenced the same way."""
        try:
            await self.emit(job, "error", error)
        except LeaseLost:
            raise
        except Exception as exc:
            if not is_database_unreachable(exc):
                raise
            await self.broker.publish(job.run_id, "error", dumps(error))

    async def _stream(
        self, job: Job, usage: UsageCounter, limit_s: float, streamed: StreamedState
    ) -> None:
        token = run_id_var.set(job.run_id)
        try:
            extra = [handler for make in self.hooks.callbacks for handler in make(job)]
            if "custom" in job.request.modes:  # events tools write past the stream writer
                extra.append(DirectEvents(lambda ev, data: self.emit(job, ev, data)))
            config = build_config(job, [usage, *extra])
            context = build_context(job)
            request = GraphRequest(
                access="threads.create_run",
                config=config,
                context=context,
                user=graph_user(job.principal),
                app_config=job.config,
                config_version=job.config_version or None,
            )
            async with asyncio.timeout(limit_s):
                async with self.graphs.graph(job.assistant.graph_id, request, job.graph) as graph:
                    await stream_graph(
                        graph,
                        build_input(job),
                        config,
                        modes=job.request.modes,
                        emit=lambda ev, data: self.emit(job, ev, data),
                        subgraphs=job.request.stream_subgraphs,
                        context=context,
                        interrupt_before=job.request.interrupt_before,
                        interrupt_after=job.request.interrupt_after,
                        durability=durability_of(job),
                        state=streamed,
                    )
        finally:
            run_id_var.reset(token)

    async def _settle(
        self,
        job: Job,
        status: Outcome,
        error: RunError | None,
        usage: dict[str, int],
        started_at: datetime | None,
        final_values: dict[str, object] | None = None,
    ) -> None:
        """``final_values``: the thread's state as the run's own stream ended it (see
        ``StreamedState``), which spares reading the checkpoint back; None to read it."""
        if job.lease_lost:  # another replica owns the run now: nothing is written
            self._fenced(job)
            return
        fence = None
        if job.fence is not None and self.leases is not None:
            fence = (self.leases.owner, job.fence)
        # A run that ends while the database is away waits for it to be back (cancelled at
        # shutdown, recovered by the next start or, in a cluster, by the lease sweeper),
        # instead of failing its settle and staying `running` with its thread busy. Up to
        # runs.settle_wait_s it waits to record its real outcome; past it the outcome is
        # `error`, written as soon as the database is back. An error is an error already:
        # it only waits for its write.
        waits = self.db.outage_waits
        within = None if error is not None else job.config.runs.settle_wait_s
        try:
            try:
                values, interrupts = await outlast_outage(
                    lambda: self._settle_once(job, status, error, usage, final_values, fence),
                    what="settling a run",
                    within_s=within,
                    waits=waits,
                )
            except OutageOutlasted:
                status, error = "error", database_unavailable(job, None)
                log.warning("run failed: %s", error["message"])
                with contextlib.suppress(LeaseLost):  # then the settle below is fenced
                    await self._emit_error(job, error)
                values, interrupts = await outlast_outage(
                    lambda: self._settle_once(job, status, error, usage, None, fence),
                    what="settling a run as error",
                    waits=waits,
                )
        except run_units.Fenced:
            job.state.lose_lease()
            self._fenced(job)
            return
        final_status = _recorded_status(status)
        if error is not None:
            output: dict[str, object] = {"__error__": error}
        else:
            output = dict(values)
            flat = [i for items in interrupts.values() for i in items]
            if flat:
                output["__interrupt__"] = flat
        job.state.settled(final_status, error, output)
        try:
            await self.broker.publish_thread(
                job.thread_id, "metadata", dumps({"status": "run_done", "run_id": job.run_id})
            )
        except BrokerUnavailable:  # the run is settled: its log still closes
            log.warning("the thread stream missed a run's end (broker unreachable)")
        # Subscribers already attached finish reading from memory; later joins read the
        # run_events table.
        await self.broker.close_run(job.run_id, job.output)
        self._after(job, final_status, started_at)

    async def _settle_once(
        self,
        job: Job,
        status: Outcome,
        error: RunError | None,
        usage: dict[str, int],
        final_values: dict[str, object] | None,
        fence: tuple[str, int] | None,
    ) -> tuple[dict[str, object], CachedInterrupts]:
        """One try at settling (see ``_settle``), raising if the database is unreachable:
        the run's and thread's final values and interrupts, once written."""
        if status == "rollback":  # deleting what is already gone is a no-op
            await self._delete_run_checkpoints(job)
        values, interrupts, pending = await self._final_state(job, final_values)
        if status in ("error", "timeout"):
            thread_status = "error"
        elif interrupts or pending:
            thread_status = "interrupted"
        else:
            thread_status = "idle"
        final_status = _recorded_status(status)

        mark = job.state.start_mark
        started = mark.drop() if mark is not None else None
        # SQLite: this process's memory says whether another run of the thread is to come,
        # read on the database thread as the settle runs (see RunManager._inflight_known);
        # elsewhere the thread's update asks the database.
        sqlite = self.db.is_sqlite

        def unit(conn: Connection) -> bool:
            others_pending = self.jobs.has_queued(job.thread_id, job.run_id) if sqlite else None
            return run_units.settle_run(
                conn,
                run_id=job.run_id,
                thread_id=job.thread_id,
                delete_run=status == "rollback",
                run_fields={
                    "status": final_status,
                    "error": error,
                    "cancel_reason": job.cancel_action if final_status == "interrupted" else None,
                    "usage": usage,
                    # Its `running` write, when not made yet, is made by this update
                    "started_at": started,
                },
                thread_status=thread_status,
                thread_fields={
                    "values": values,
                    "interrupts": interrupts,
                    "error": error if thread_status == "error" else None,
                },
                others_pending=others_pending,
                lock_rows=not sqlite,
                fence=fence,
            )

        # Every event is stored before the run is recorded as finished, so a reader that
        # sees the final status finds all of them (a rolled-back run's go with its row):
        # the last ones in the settle's own transaction.
        more = await self.broker.flush_with(job.run_id, unit)
        job.state.saw_others(more)
        return values, interrupts

    async def _delete_run_checkpoints(self, job: Job) -> None:
        try:
            await self.checkpointer.adelete_for_runs([job.run_id])
        except Exception as exc:
            if is_database_unreachable(exc):
                raise
            log.exception("rollback of checkpoints failed")

    async def _final_state(
        self, job: Job, final_values: dict[str, object] | None
    ) -> tuple[dict[str, object], CachedInterrupts, bool]:
        """The thread's values and interrupts as the run left them, and whether nodes are
        still to run: from the run's own stream when it carried them, else the checkpoint."""
        if final_values is not None:
            return cached_values(final_values), {}, False
        snapshot = await self._final_snapshot(job)
        if snapshot is None:
            return {}, {}, False
        values, interrupts = thread_values_and_interrupts(snapshot)
        return values, interrupts, bool(snapshot.next)

    def _fenced(self, job: Job) -> None:
        """The run lost its lease (another replica took it over): it ends here without
        writing its status, events or thread state over the new owner's."""
        log.warning("run stopped: its lease was taken over", extra={"run_id": job.run_id})
        job.state.fenced(
            {
                "error": "LeaseLost",
                "message": "This replica lost the run's lease; another replica took it over.",
            }
        )

    async def _final_snapshot(self, job: Job) -> StateSnapshot | None:
        """The thread's latest checkpoint as a StateSnapshot (None if it cannot be read)."""
        try:
            state_config: RunnableConfig = {
                "configurable": {"thread_id": job.thread_id, "checkpoint_ns": ""}
            }
            read = GraphRequest(
                access="threads.read",
                config=state_config,
                app_config=job.config,
                config_version=job.config_version or None,
            )
            async with self.graphs.graph(job.assistant.graph_id, read, job.graph) as graph:
                return await graph.aget_state(state_config)
        except Exception as exc:
            if is_database_unreachable(exc):
                raise  # tried again once it is back: a thread's values are not lost to {}
            log.exception("reading the final state failed")
            return None

    def _after(self, job: Job, status: str, started_at: datetime | None) -> None:
        if job.request.webhook:
            payload = {
                **run_api(job.run),
                "status": status,
                "values": job.output if not job.error else None,
                "error": job.error,
                "run_started_at": started_at.isoformat() if started_at else None,
                "run_ended_at": datetime.now(UTC).isoformat(),
            }
            self.webhooks.send(
                job.request.webhook,
                cast("JsonObject", to_jsonable(payload)),  # a dict's JSON is an object
                allow_private=job.config.runs.webhook_allow_private_addresses,
            )
        if job.temporary and job.request.on_completion == "delete" and self.thread_deleter:
            task = asyncio.create_task(self.thread_deleter(job.thread_id))
            self.background.add(task)
            task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self.background.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a failed deletion is not "never retrieved"

    async def drain(self) -> None:
        """Wait for the deletions of finished stateless runs' threads (before shutdown
        closes the database under them)."""
        while self.background:
            await asyncio.wait(list(self.background))

    async def finish_expired(self, job: Job, error: RunError) -> None:
        """A run that waited past `runs.max_queue_wait_s`: it ends `error`, never started."""
        job.state.begin_finishing()
        await self.emit(job, "error", error)
        await self._settle(job, "error", error, {}, None)

    async def finish_unstarted(self, job: Job) -> None:
        """A run cancelled before it started executing."""
        job.state.begin_finishing()
        await self._settle(job, _cancelled_status(job), None, {}, None)

    async def settle_orphan(
        self,
        row: RunRecord,
        *,
        status: str,
        error: RunError | None,
        cancel_reason: str | None,
    ) -> None:
        """Settle a run no live task owns (left by a dead process)."""

        def unit(conn: Connection) -> None:
            run_units.settle_orphan(
                conn,
                row.run_id,
                row.thread_id,
                status=status,
                error=error,
                cancel_reason=cancel_reason,
            )

        await self.db.retry(lambda: self.db.write(unit))
