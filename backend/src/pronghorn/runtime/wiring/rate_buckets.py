"""The per-user request rate buckets (`rate_limits.backend`) and the failed-login limits:
in memory, or in Redis so every replica shares them.

`rate_limits.backend: auto` (the default) shares the buckets through Redis when the broker
is Redis; the failed-login and failed-API-key windows are shared then too (they are always
counted in memory as well, the fallback while Redis is unreachable).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from pronghorn.auth.request_rate import MemoryRateBuckets
from pronghorn.runtime.wiring.app_runtime import AppRuntime


@contextlib.asynccontextmanager
async def rate_buckets(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    config = runtime.config
    broker = config.broker
    backend = config.rate_limits.backend
    if backend == "auto":
        backend = "redis" if broker.kind == "redis" else "memory"
    async with contextlib.AsyncExitStack() as stack:
        if backend == "memory":
            runtime.rate_buckets = MemoryRateBuckets()
        else:
            from pronghorn.auth.request_rate import RedisRateBuckets

            shared = RedisRateBuckets.from_url(
                broker.redis_url, prefix=f"{broker.key_prefix}:rate:"
            )
            stack.push_async_callback(shared.aclose)
            runtime.rate_buckets = shared
        if broker.kind == "redis":
            from pronghorn.auth.ratelimit_redis import RedisFailures

            failures = RedisFailures.from_url(broker.redis_url, prefix=broker.key_prefix)
            stack.push_async_callback(failures.aclose)
            limits = runtime.auth.limits
            limits.share(failures)
            stack.callback(limits.share, None)
        yield
