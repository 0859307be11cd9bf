"""The run queue contract (runtime/engine/run_queue.py), one suite for both implementations.

Each queue runs under a real runtime (no HTTP), its engine chosen by the config exactly as
a server chooses it: `local` on SQLite with the in-process broker (LocalRunQueue), `cluster`
on a fresh PostgreSQL database and Redis (ClusterRunQueue: runs go through the database
queue, claimed under a lease). The same tests check per-thread ordering, the multitask
strategies, the concurrency limit and cancel on both; every wait is on the run's own events.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pronghorn.auth.principal import LOCAL_PRINCIPAL
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.runtime.access import Access
from pronghorn.runtime.cluster.run_queue_cluster import ClusterRunQueue
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.run_queue_local import LocalRunQueue
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.errors import Conflict, NotFound
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.runtime.wiring.assemble import open_runtime
from runs.backends import PG_URL, database
from support.live import base_config
from support.redis_kit import REDIS_URL, drop_prefix, new_prefix, require_redis
from unit.run_events import is_update, until_event

ME = Access(LOCAL_PRINCIPAL)

RuntimeFactory = Callable[..., contextlib.AbstractAsyncContextManager[AppRuntime]]


@contextlib.asynccontextmanager
async def _open(workdir: Path, cfg: dict[str, Any]) -> AsyncIterator[AppRuntime]:
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    async with open_runtime(ConfigHolder(load_config(path, {})), base_dir=workdir) as rt:
        yield rt


@contextlib.asynccontextmanager
async def local_runtime(workdir: Path, runs: dict[str, Any]) -> AsyncIterator[AppRuntime]:
    async with _open(workdir, base_config(runs=runs)) as rt:
        assert isinstance(rt.runs.queue, LocalRunQueue)
        yield rt


@contextlib.asynccontextmanager
async def cluster_runtime(workdir: Path, runs: dict[str, Any]) -> AsyncIterator[AppRuntime]:
    if not PG_URL:
        pytest.skip("the cluster queue needs PostgreSQL: set PRONGHORN_TEST_POSTGRES_URL")
    require_redis()
    prefix = new_prefix()
    with database("postgres", workdir) as (db_cfg, _):
        cfg = base_config(
            database=db_cfg,
            broker={"kind": "redis", "redis_url": REDIS_URL, "key_prefix": prefix},
            runs={"queue_poll_s": 1.0, **runs},
        )
        try:
            async with _open(workdir, cfg) as rt:
                assert isinstance(rt.runs.queue, ClusterRunQueue)
                yield rt
        finally:
            await drop_prefix(prefix)


QUEUES = [
    pytest.param(local_runtime, id="local"),
    pytest.param(cluster_runtime, id="cluster"),
]


@pytest.fixture(params=QUEUES)
def open_queue(request: pytest.FixtureRequest, tmp_path: Path) -> RuntimeFactory:
    factory = request.param

    def make(**runs: Any) -> contextlib.AbstractAsyncContextManager[AppRuntime]:
        return factory(tmp_path, runs)

    return make


def request(sleep: float, **body: Any) -> RunCreate:
    """A run of the echo graph that sleeps `sleep` seconds in its `work` step (set on every
    run: the echo graph keeps its knobs in the thread's state)."""
    return RunCreate.model_validate(
        {
            "assistant_id": "echo",
            "if_not_exists": "create",
            "input": {"messages": [{"role": "human", "content": "hi"}], "sleep": sleep},
            "stream_mode": ["updates"],
            **body,
        }
    )


async def started(runtime: AppRuntime, job: Job) -> None:
    """Wait until the run executes (its first step is done)."""
    await until_event(runtime, job, is_update("prepare"))


async def test_a_threads_runs_execute_one_at_a_time_in_creation_order(
    open_queue: RuntimeFactory,
) -> None:
    async with open_queue() as runtime:
        tid = str(uuid.uuid4())
        first = await runtime.runs.create(tid, request(60), ME)
        second = await runtime.runs.create(tid, request(0, multitask_strategy="enqueue"), ME)
        await started(runtime, first)
        assert second.status == "pending" and not second.done.is_set()
        await runtime.runs.cancel(tid, first.run_id, wait=True)
        assert first.status == "interrupted"
        await second.done.wait()
        assert second.status == "success"


async def test_reject_refuses_a_run_while_its_thread_is_busy(open_queue: RuntimeFactory) -> None:
    async with open_queue() as runtime:
        tid = str(uuid.uuid4())
        first = await runtime.runs.create(tid, request(60), ME)
        with pytest.raises(Conflict):
            await runtime.runs.create(tid, request(0, multitask_strategy="reject"), ME)
        await runtime.runs.cancel(tid, first.run_id, wait=True)
        assert first.status == "interrupted"


async def test_interrupt_stops_the_run_in_flight_and_runs_the_new_one(
    open_queue: RuntimeFactory,
) -> None:
    async with open_queue() as runtime:
        tid = str(uuid.uuid4())
        first = await runtime.runs.create(tid, request(60), ME)
        await started(runtime, first)
        second = await runtime.runs.create(tid, request(0, multitask_strategy="interrupt"), ME)
        await first.done.wait()
        await second.done.wait()
        assert (first.status, second.status) == ("interrupted", "success")


async def test_rollback_deletes_the_run_in_flight(open_queue: RuntimeFactory) -> None:
    async with open_queue() as runtime:
        tid = str(uuid.uuid4())
        first = await runtime.runs.create(tid, request(60), ME)
        await started(runtime, first)
        second = await runtime.runs.create(tid, request(0, multitask_strategy="rollback"), ME)
        await first.done.wait()
        await second.done.wait()
        assert second.status == "success"
        with pytest.raises(NotFound):  # its row went with its checkpoints
            await runtime.runs.cancel(tid, first.run_id)


async def test_the_concurrency_limit_holds_runs_of_other_threads_pending(
    open_queue: RuntimeFactory,
) -> None:
    async with open_queue(max_concurrency=1) as runtime:
        first = await runtime.runs.create(str(uuid.uuid4()), request(60), ME)
        await started(runtime, first)
        other = str(uuid.uuid4())
        second = await runtime.runs.create(other, request(0), ME)
        assert second.status == "pending" and not second.done.is_set()
        await runtime.runs.cancel(None, first.run_id, wait=True)
        await second.done.wait()
        assert second.status == "success"


async def test_cancel_ends_a_queued_run_without_running_it_and_is_idempotent(
    open_queue: RuntimeFactory,
) -> None:
    async with open_queue() as runtime:
        tid = str(uuid.uuid4())
        first = await runtime.runs.create(tid, request(60), ME)
        queued = await runtime.runs.create(tid, request(0, multitask_strategy="enqueue"), ME)
        await runtime.runs.cancel(tid, queued.run_id, wait=True)
        await queued.done.wait()
        assert queued.status == "interrupted"
        assert await runtime.runs.cancel(tid, queued.run_id) is None  # again: a no-op
        await runtime.runs.cancel(tid, first.run_id, wait=True)
        assert first.status == "interrupted"
        with pytest.raises(NotFound):
            await runtime.runs.cancel(tid, str(uuid.uuid4()))
