"""The per-user token bucket, on an injected clock."""

from __future__ import annotations

import pytest

from pronghorn.auth.request_rate import MemoryRateBuckets


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_refill_at_the_rate() -> None:
    clock = Clock()
    buckets = MemoryRateBuckets(clock=clock)
    for _ in range(3):
        assert buckets.take_now("a", rate=2.0, burst=3) is None
    assert buckets.take_now("a", rate=2.0, burst=3) == pytest.approx(0.5)
    assert buckets.take_now("b", rate=2.0, burst=3) is None  # keys are apart
    clock.now += 0.25
    assert buckets.take_now("a", rate=2.0, burst=3) == pytest.approx(0.25)
    clock.now += 0.25
    assert buckets.take_now("a", rate=2.0, burst=3) is None
    clock.now += 100  # refills to the burst, never beyond
    for _ in range(3):
        assert buckets.take_now("a", rate=2.0, burst=3) is None
    assert buckets.take_now("a", rate=2.0, burst=3) is not None


async def test_take_is_the_async_contract() -> None:
    buckets = MemoryRateBuckets(clock=Clock())
    assert await buckets.take("a", rate=1.0, burst=1) is None
    assert await buckets.take("a", rate=1.0, burst=1) == pytest.approx(1.0)


def test_key_count_is_bounded() -> None:
    clock = Clock()
    buckets = MemoryRateBuckets(clock=clock, max_keys=10)
    for i in range(50):
        buckets.take_now(f"user{i}", rate=1.0, burst=5)
        clock.now += 0.01
    assert len(buckets._buckets) <= 10
