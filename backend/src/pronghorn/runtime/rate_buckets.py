"""The per-user request rate buckets (`rate_limits.backend`): in memory, or in Redis so
every replica shares them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from pronghorn.auth.request_rate import MemoryRateBuckets, RedisRateBuckets
from pronghorn.runtime.runtime import Runtime


@contextlib.asynccontextmanager
async def rate_buckets(runtime: Runtime) -> AsyncGenerator[None, None]:
    config = runtime.config
    if config.rate_limits.backend == "memory":
        runtime.rate_buckets = MemoryRateBuckets()
        yield
        return
    shared = RedisRateBuckets.from_url(config.broker.redis_url)
    runtime.rate_buckets = shared
    try:
        yield
    finally:
        await shared.aclose()
