"""The broker component with `broker.kind: redis`: one Redis client shared by the event
broker (Redis Streams) and the control bus (pub/sub), closed when the component stops."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from pronghorn.persistence.repos import run_units
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.runtime.cluster.redis_control import RedisControlBus
from pronghorn.runtime.events.event_store import SqlEventStore
from pronghorn.runtime.events.redis_broker import RedisBroker, redis_client
from pronghorn.runtime.wiring.app_runtime import AppRuntime

BLOCK_S = 5.0  # how long a stream read waits in Redis before it checks the run's status


@contextlib.asynccontextmanager
async def redis_broker(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    cfg = runtime.config.broker
    db = runtime.db

    async def run_finished(run_id: str) -> bool:
        found = await db.write(lambda conn: run_units.run_status_owner(conn, run_id))
        return found is None or found[0] not in runs_repo.INFLIGHT

    async with redis_client(cfg.redis_url, block_s=BLOCK_S) as client:
        broker = RedisBroker(
            client=client,
            store=SqlEventStore(db),
            prefix=cfg.key_prefix,
            run_cache_events=cfg.run_cache_events,
            thread_cache_events=cfg.thread_cache_events,
            stream_ttl_s=cfg.stream_ttl_s,
            finished_ttl_s=cfg.finished_ttl_s,
            retry_s=cfg.retry_s,
            block_s=BLOCK_S,
            run_finished=run_finished,
        )
        control = RedisControlBus(client, prefix=cfg.key_prefix, retry_s=cfg.retry_s)
        await broker.start()
        runtime.broker = broker
        runtime.control = control
        try:
            yield
        finally:
            await control.aclose()
            await broker.aclose()
