"""The components the Runtime starts after its core, in order (stopped in reverse).

Each is an async context manager factory taking the Runtime; it sets its attribute on it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from pronghorn.models.factory import ModelFactory
from pronghorn.runtime.executor import Executor
from pronghorn.runtime.manager import RunManager
from pronghorn.runtime.memory_broker import MemoryBroker
from pronghorn.runtime.runtime import Runtime
from pronghorn.runtime.thread_sweeper import purge_thread, thread_sweeper
from pronghorn.runtime.webhook import WebhookSender


@contextlib.asynccontextmanager
async def models(runtime: Runtime) -> AsyncIterator[None]:
    runtime.models = ModelFactory(runtime.config)

    def _refresh(old: Any, new: Any) -> None:
        runtime.models = ModelFactory(new)

    runtime.settings.add_listener(_refresh)
    yield


@contextlib.asynccontextmanager
async def broker(runtime: Runtime) -> AsyncIterator[None]:
    cfg = runtime.config
    if cfg.broker.kind != "memory":
        raise RuntimeError(f"broker.kind {cfg.broker.kind!r} is not available yet")
    mem = MemoryBroker(
        run_retention_bytes=cfg.streaming.run_retention_bytes,
        total_retention_bytes=cfg.streaming.total_retention_bytes,
        finished_retention_s=cfg.streaming.finished_retention_s,
    )

    def _retune(old: Any, new: Any) -> None:
        mem.run_retention_bytes = new.streaming.run_retention_bytes
        mem.total_retention_bytes = new.streaming.total_retention_bytes
        mem.finished_retention_s = new.streaming.finished_retention_s

    runtime.settings.add_listener(_retune)
    await mem.start()
    runtime.broker = mem
    try:
        yield
    finally:
        await mem.aclose()


@contextlib.asynccontextmanager
async def runs(runtime: Runtime) -> AsyncIterator[None]:
    cfg = runtime.config
    webhooks = WebhookSender(timeout_s=cfg.runs.webhook_timeout_s, retries=cfg.runs.webhook_retries)

    async def delete_temporary(thread_id: str) -> None:
        await purge_thread(runtime, thread_id)

    executor = Executor(
        db=runtime.db,
        graphs=runtime.graphs,
        broker=runtime.broker,
        checkpointer=runtime.checkpointer,
        settings=runtime.settings,
        webhooks=webhooks,
        thread_deleter=delete_temporary,
    )
    manager = RunManager(executor)
    runtime.settings.add_listener(manager.on_config_change)
    runtime.runs = manager
    await manager.recover()
    try:
        yield
    finally:
        await manager.shutdown(runtime.config.runs.drain_timeout_s)
        await webhooks.aclose()


COMPONENTS: list[Callable[[Runtime], contextlib.AbstractAsyncContextManager[None]]] = [
    models,
    broker,
    runs,
    thread_sweeper,
]
