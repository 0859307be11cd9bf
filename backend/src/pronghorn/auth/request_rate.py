"""Per-user request rate limits: a token bucket per key (a principal's identity).

A bucket holds up to `burst` tokens and refills at `rate` tokens a second; each request
takes one, and a request finding less than one is refused with the seconds until one is
there (`Retry-After`). `RateBuckets` is the contract; `MemoryRateBuckets` keeps buckets
in this process (behind N replicas a user gets N times the rate, the clock is injectable so
tests need no sleeps); `RedisRateBuckets` shares them between replicas.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from redis.asyncio import Redis

Clock = Callable[[], float]


class RateBuckets(Protocol):
    async def take(self, key: str, *, rate: float, burst: int) -> float | None:
        """Take one token from `key`'s bucket: None when granted, else seconds to wait."""
        ...


@dataclass
class _Bucket:
    tokens: float
    at: float


class MemoryRateBuckets:
    def __init__(self, *, clock: Clock = time.monotonic, max_keys: int = 50_000) -> None:
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: dict[str, _Bucket] = {}

    async def take(self, key: str, *, rate: float, burst: int) -> float | None:
        return self.take_now(key, rate=rate, burst=burst)

    def take_now(self, key: str, *, rate: float, burst: int) -> float | None:
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_keys:
                self._prune(now, rate, burst)
            bucket = self._buckets[key] = _Bucket(tokens=float(burst), at=now)
        else:
            bucket.tokens = min(float(burst), bucket.tokens + (now - bucket.at) * rate)
            bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return None
        return (1.0 - bucket.tokens) / rate

    def _prune(self, now: float, rate: float, burst: int) -> None:
        """Forget full buckets (they hold no information), else the oldest."""
        for key, bucket in list(self._buckets.items()):
            if bucket.tokens + (now - bucket.at) * rate >= burst:
                del self._buckets[key]
        while len(self._buckets) >= self.max_keys:
            self._buckets.pop(next(iter(self._buckets)))


# One bucket as a Redis hash {tokens, at}; the server's clock (TIME), so every replica
# agrees on it. Returns the wait in seconds as a string ("0": granted).
TAKE_SCRIPT = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return tostring(wait)
"""


class RedisRateBuckets:
    """Buckets shared by every replica through Redis (`rate_limits.backend: redis`): one
    atomic script per request; a key expires once its bucket would be full again."""

    def __init__(self, client: Redis, *, prefix: str = "pronghorn:rate:") -> None:
        self.client = client
        self.prefix = prefix
        self._take = client.register_script(TAKE_SCRIPT)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "pronghorn:rate:") -> RedisRateBuckets:
        from redis.asyncio import Redis

        connect = cast("Callable[..., Redis]", Redis.from_url)
        client = connect(url, socket_connect_timeout=2.0, socket_timeout=5.0)
        return cls(client, prefix=prefix)

    async def take(self, key: str, *, rate: float, burst: int) -> float | None:
        raw: object = await self._take(keys=[self.prefix + key], args=[repr(rate), burst])
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        wait = float(text)
        return None if wait <= 0 else wait

    async def aclose(self) -> None:
        await self.client.aclose()
