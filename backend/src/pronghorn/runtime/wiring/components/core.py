"""The components the AppRuntime starts after its core, in order (stopped in reverse).

Each is an async context manager factory taking the AppRuntime; it sets its attribute on it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING

from pronghorn.config.schema.app import AppConfig, RunsConfig
from pronghorn.models.errors import UnknownModelError
from pronghorn.models.factory import ModelFactory
from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.persistence.records.json_object import json_object
from pronghorn.runtime.cluster.leases import Leases
from pronghorn.runtime.cluster.replicas import replicas
from pronghorn.runtime.cluster.run_queue_cluster import ClusterRunQueue
from pronghorn.runtime.engine.admission import Admission
from pronghorn.runtime.engine.control import LocalControlBus
from pronghorn.runtime.engine.executor import Executor
from pronghorn.runtime.engine.job_table import JobTable
from pronghorn.runtime.engine.message_input import message_input_validator
from pronghorn.runtime.engine.run_hooks import RunHooks
from pronghorn.runtime.engine.run_manager import RunManager, RunValidator
from pronghorn.runtime.engine.run_queue import RunQueue
from pronghorn.runtime.engine.run_queue_local import LocalRunQueue
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.engine.thread_turns import ThreadTurns
from pronghorn.runtime.engine.webhook import WebhookRefusedError, WebhookSender, check_webhook_url
from pronghorn.runtime.engine.workspace_changes import WorkspaceRecorder
from pronghorn.runtime.errors import InvalidRun, RefusedRun
from pronghorn.runtime.events.event_store import SqlEventStore
from pronghorn.runtime.events.memory_broker import MemoryBroker
from pronghorn.runtime.services.agent_directory import AssistantAgentDirectory
from pronghorn.runtime.services.approval_sweeper import approval_sweeper
from pronghorn.runtime.services.scheduler import scheduler
from pronghorn.runtime.services.thread_sweeper import purge_thread, thread_sweeper
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.runtime.wiring.components.mcp_servers import mcp_servers
from pronghorn.runtime.wiring.components.memory_service import memory
from pronghorn.runtime.wiring.graph_reload import graph_reload
from pronghorn.runtime.wiring.rate_buckets import rate_buckets
from pronghorn.runtime.wiring.telemetry import telemetry, telemetry_hooks
from pronghorn.sandbox.container import ContainerSandboxProvider
from pronghorn.sandbox.local import LocalSandboxProvider
from pronghorn.sandbox.paths import adopt_legacy_folder
from pronghorn.subagents import SubagentPool

if TYPE_CHECKING:
    from pronghorn.sandbox.kubernetes.provider import KubernetesSandboxProvider


@contextlib.asynccontextmanager
async def models(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    runtime.models = ModelFactory(runtime.config)

    def _refresh(old: AppConfig, new: AppConfig) -> None:
        runtime.models = ModelFactory(new)

    runtime.settings.add_listener(_refresh)
    yield


def model_name_of(req: RunCreate) -> str | None:
    """The model a run asks for: `context.model_name`, else `configurable.model_name`."""
    name = (req.context or {}).get("model_name")
    if name is None:
        configurable = json_object((req.config or {}).get("configurable") or {}) or {}
        name = configurable.get("model_name")
    return None if name is None else str(name)


def check_model(runtime: AppRuntime) -> RunValidator:
    def validate(req: RunCreate, assistant: AssistantRecord) -> None:
        name = model_name_of(req)
        if name is None:
            return
        try:
            runtime.models.resolve(str(name))
        except UnknownModelError:
            raise InvalidRun(f"Unknown model {name!r}; see GET /api/models") from None

    return validate


def check_webhook(runtime: AppRuntime) -> RunValidator:
    def validate(req: RunCreate, assistant: AssistantRecord) -> None:
        if req.webhook is None:
            return
        allow = runtime.config.runs.webhook_allow_private_addresses
        try:
            check_webhook_url(req.webhook, allow_private=allow)
        except WebhookRefusedError as exc:
            raise RefusedRun(str(exc)) from None

    return validate


@contextlib.asynccontextmanager
async def sandbox(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    # The data dir as the runtime resolved it (relative to the base dir), so the sandbox and
    # the files API always agree on where a thread's folders are.
    # Thread folders from before owners (users/default) belong to the "local" user now.
    await asyncio.to_thread(adopt_legacy_folder, runtime.data_dir)
    config = runtime.config.model_copy(update={"data_dir": str(runtime.data_dir)})
    provider: LocalSandboxProvider | ContainerSandboxProvider | KubernetesSandboxProvider
    if config.sandbox.kind == "kubernetes":
        from pronghorn.sandbox.kubernetes.provider import KubernetesSandboxProvider

        provider = KubernetesSandboxProvider(config)
    elif config.sandbox.kind == "container":
        provider = ContainerSandboxProvider(config, mounts=runtime.skills)
    else:
        provider = LocalSandboxProvider(
            config, mounts=runtime.skills
        )  # skills, read-only at /mnt/skills/...
    try:
        await provider.start()
    except BaseException:
        await provider.close()
        raise
    runtime.sandbox = provider
    try:
        yield
    finally:
        await provider.close()


@contextlib.asynccontextmanager
async def broker(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    cfg = runtime.config
    if cfg.broker.kind == "redis":
        from pronghorn.runtime.wiring.components.redis_bus import redis_broker  # redis: only then

        async with redis_broker(runtime):
            yield
        return
    runtime.control = LocalControlBus()
    mem = MemoryBroker(
        store=SqlEventStore(runtime.db),
        run_retention_bytes=cfg.streaming.run_retention_bytes,
        total_retention_bytes=cfg.streaming.total_retention_bytes,
    )

    def _retune(old: AppConfig, new: AppConfig) -> None:
        mem.run_retention_bytes = new.streaming.run_retention_bytes
        mem.total_retention_bytes = new.streaming.total_retention_bytes

    runtime.settings.add_listener(_retune)
    await mem.start()
    runtime.broker = mem
    try:
        yield
    finally:
        await mem.aclose()


def run_queue(
    runtime: AppRuntime, admission: Admission, jobs: JobTable, turns: ThreadTurns
) -> tuple[RunQueue, Leases | None]:
    """The run queue: the database queue and its leases when replicas share PostgreSQL and
    Redis (cluster/run_queue_cluster.py), else this process's (engine/run_queue_local.py)."""
    owner = runtime.db.replica_id
    if runtime.db.is_sqlite or runtime.config.broker.kind != "redis":
        local = LocalRunQueue(owner=owner, admission=admission, broker=runtime.broker, turns=turns)
        return local, None

    def runs_config() -> RunsConfig:
        return runtime.settings.current.runs

    leases = Leases(
        runtime.db,
        owner=owner,
        lease_s=lambda: runs_config().lease_s,
        recover_mode=lambda: runs_config().recover,
        max_queue_wait_s=lambda: runs_config().max_queue_wait_s,
    )
    cluster = ClusterRunQueue(
        db=runtime.db,
        broker=runtime.broker,
        control=runtime.control,
        settings=runtime.settings,
        admission=admission,
        jobs=jobs,
        turns=turns,
        leases=leases,
    )
    return cluster, leases


@contextlib.asynccontextmanager
async def runs(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    cfg = runtime.config
    webhooks = WebhookSender(timeout_s=cfg.runs.webhook_timeout_s, retries=cfg.runs.webhook_retries)

    async def delete_temporary(thread_id: str) -> None:
        await purge_thread(runtime, thread_id)

    jobs = JobTable()
    turns = ThreadTurns()
    admission = Admission(cfg.runs, runtime.metrics)
    queue, leases = run_queue(runtime, admission, jobs, turns)
    executor = Executor(
        db=runtime.db,
        graphs=runtime.graphs,
        broker=runtime.broker,
        checkpointer=runtime.checkpointer,
        settings=runtime.settings,
        webhooks=webhooks,
        jobs=jobs,
        hooks=telemetry_hooks(runtime) + RunHooks(watchers=(WorkspaceRecorder(runtime).watch,)),
        leases=leases,
        thread_deleter=delete_temporary,
    )
    manager = RunManager(
        executor,
        jobs,
        queue,
        admission=admission,
        turns=turns,
        authorizer=runtime.authorizer,
        metrics=runtime.metrics,
        control=runtime.control,
        validators=(
            check_model(runtime),
            check_webhook(runtime),
            message_input_validator(runtime.graphs),
        ),
    )
    await runtime.control.listen(manager.owner, manager.on_control)
    runtime.settings.add_listener(manager.on_config_change)
    runtime.runs = manager
    await manager.recover()
    manager.start()
    try:
        yield
    finally:
        await manager.shutdown(runtime.config.runs.drain_timeout_s)
        await webhooks.aclose()


@contextlib.asynccontextmanager
async def subagents(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    pool = SubagentPool(
        runtime.config.subagents.max_concurrent,
        directory=AssistantAgentDirectory(runtime.db),
        skills=runtime.skills,
    )

    def _resize(old: AppConfig, new: AppConfig) -> None:
        pool.resize(new.subagents.max_concurrent)

    runtime.settings.add_listener(_resize)
    runtime.subagents = pool
    yield


COMPONENTS: list[Callable[[AppRuntime], contextlib.AbstractAsyncContextManager[None]]] = [
    models,
    telemetry,
    rate_buckets,
    sandbox,
    subagents,
    mcp_servers,
    broker,
    memory,
    runs,
    graph_reload,
    replicas,
    thread_sweeper,
    scheduler,
    approval_sweeper,
]
