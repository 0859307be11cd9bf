"""The failed-login windows in Redis, shared by every replica (`AuthLimits.share`).

One sorted set per key (`<prefix>:authfail:<ip:…|account:…>`): a member per failure, scored
by the Redis server's clock (TIME, so replicas agree on it), trimmed to the window and to
the newest `limit` entries, expiring with the window. Each call is one atomic script.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import cast

from redis import exceptions as redis_errors
from redis.asyncio import Redis

# KEYS: the set. ARGV: limit, window (s), a unique member suffix.
FAILED = """
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, t[1] .. '.' .. t[2] .. ':' .. ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(limit + 1))
redis.call('PEXPIRE', KEYS[1], math.ceil(window * 1000))
return 1
"""

# KEYS: the set. ARGV: limit, window (s). Returns the wait in seconds ("0": may try).
RETRY_AFTER = """
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then return '0' end
local oldest = redis.call('ZRANGE', KEYS[1], -limit, -limit, 'WITHSCORES')
return tostring(math.max(0.001, tonumber(oldest[2]) + window - now))
"""


class RedisFailures:
    unreachable: tuple[type[BaseException], ...] = (
        redis_errors.ConnectionError,
        redis_errors.TimeoutError,
        OSError,
    )

    def __init__(self, client: Redis, *, prefix: str) -> None:
        self.client = client
        self.prefix = f"{prefix}:authfail:"
        self._failed = client.register_script(FAILED)
        self._retry_after = client.register_script(RETRY_AFTER)

    @classmethod
    def from_url(cls, url: str, *, prefix: str) -> RedisFailures:
        connect = cast("Callable[..., Redis]", Redis.from_url)
        return cls(connect(url, socket_connect_timeout=2.0, socket_timeout=5.0), prefix=prefix)

    async def retry_after(self, key: str, *, limit: int, window_s: float) -> float | None:
        raw: object = await self._retry_after(keys=[self.prefix + key], args=[limit, window_s])
        wait = float(raw.decode() if isinstance(raw, bytes) else str(raw))
        return None if wait <= 0 else wait

    async def failed(self, key: str, *, limit: int, window_s: float) -> None:
        nonce = uuid.uuid4().hex[:12]
        await self._failed(keys=[self.prefix + key], args=[limit, window_s, nonce])

    async def reset(self, key: str) -> None:
        await self.client.delete(self.prefix + key)

    async def aclose(self) -> None:
        await self.client.aclose()
