"""Per-user request rate limits: a token bucket per key (a principal's identity).

A bucket holds up to `burst` tokens and refills at `rate` tokens a second; each request
takes one, and a request finding less than one is refused with the seconds until one is
there (`Retry-After`). `RateBuckets` is the contract; `MemoryRateBuckets` keeps buckets
in this process (behind N replicas a user gets N times the rate). A shared implementation
(Redis) answers the same `take`. The clock is injectable so tests need no sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

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
