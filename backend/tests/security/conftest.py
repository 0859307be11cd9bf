"""The security suite: each test performs one attack for real against real components.

Attacks on a live gateway assert two things: the attack is refused, and the gateway stays
responsive while it runs (``assert_responsive`` polls ``/health`` from another thread).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from support.inproc import InProcessServer


class Probes(list[float]):
    """The latencies of the /health probes so far (seconds), appended by the probe thread;
    ``wait_for(n)`` blocks until ``n`` probes have answered."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = threading.Condition()

    def record(self, latency: float) -> None:
        with self._changed:
            self.append(latency)
            self._changed.notify_all()

    def wait_for(self, count: int, timeout: float = 30.0) -> None:
        with self._changed:
            done = self._changed.wait_for(lambda: len(self) >= count, timeout)
        assert done, f"only {len(self)} of {count} /health probes answered in {timeout}s"


def load_factor() -> float:
    """How many times over the machine's cores are busy (1 when it is not overloaded)."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


@contextmanager
def assert_responsive(target: str | InProcessServer, *, limit_s: float = 1.0) -> Iterator[Probes]:
    """While the block runs, ``GET /health`` must answer within ``limit_s`` every time.

    ``target`` is a live server's base URL or an in-process gateway (probed through its own
    client, from this other thread: its event loop is not the test's).

    Yields the observed latencies (seconds, a ``Probes``); raises AssertionError after the
    block if any probe was slower than ``limit_s`` or failed. On a machine busier than its
    cores (a parallel suite, CI neighbours) the limit grows with the load: a freeze is an
    event loop blocked for seconds, not a probe queued behind other processes.
    """
    limit_s = limit_s * load_factor()
    latencies = Probes()
    failures: list[str] = []
    stop = threading.Event()

    if isinstance(target, str):
        client = httpx.Client(base_url=target, timeout=limit_s * 5)
    else:
        client = target.http(timeout=limit_s * 5)
    client.get("/health").raise_for_status()  # connected and warm before the attack

    def probe() -> None:
        # At least one probe runs after the attack started, however short the block is.
        while True:
            started = time.monotonic()
            try:
                client.get("/health").raise_for_status()
            except httpx.HTTPError as exc:
                failures.append(repr(exc))
            latencies.record(time.monotonic() - started)
            if stop.wait(0.05):
                return

    thread = threading.Thread(target=probe, name="health-probe", daemon=True)
    thread.start()
    try:
        yield latencies
    finally:
        stop.set()
        thread.join(60)
        client.close()
    assert not failures, f"/health failed during the attack: {failures[:3]}"
    assert latencies, "the health probe never ran"
    slowest = max(latencies)
    assert slowest <= limit_s, f"/health took {slowest:.2f}s in the attack (limit {limit_s:.1f}s)"
