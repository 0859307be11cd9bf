"""Sandbox start latency and the cost of one bash call, per provider.

    cd backend && uv run python ../scripts/bench_sandbox.py [--rounds N] [--image TAG]

Providers: local ``isolation: none``, local ``isolation: bwrap`` (when bwrap can run), and
the container provider on the Docker engine at DOCKER_HOST or the local socket
(``--image``: the sandbox image, e.g. the tag ``tests/support/docker_engine.py`` built).

- **cold start**: the first ``echo`` of a new thread (for a container: create + start the
  container, then the exec), median over ``--rounds`` threads;
- **warm start**: the first ``echo`` of a thread whose container is already running (the
  local providers have no start: the same as one call);
- **one call**: ``echo`` in a sandbox already used, median over ``--rounds`` calls.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox import LocalSandboxProvider, bwrap
from pronghorn.sandbox.container import ContainerSandboxProvider


async def _timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def _bench_local(data: Path, isolation: str, rounds: int) -> dict[str, float]:
    provider = LocalSandboxProvider(
        AppConfig(data_dir=str(data), sandbox={"isolation": isolation})
    )
    await provider.start()
    colds: list[float] = []
    for _ in range(rounds):
        sb = await provider.acquire("bench", str(uuid.uuid4()))
        colds.append(await _timed(lambda sb=sb: sb.execute("echo hi")))
    sb = await provider.acquire("bench", str(uuid.uuid4()))
    await sb.execute("echo warm-up")
    calls = [await _timed(lambda: sb.execute("echo hi")) for _ in range(rounds)]
    await provider.close()
    cold = statistics.median(colds)
    return {"cold": cold, "warm": cold, "call": statistics.median(calls)}


async def _bench_container(data: Path, image: str, rounds: int) -> dict[str, float]:
    config = AppConfig(
        data_dir=str(data),
        sandbox={
            "kind": "container",
            "container": {
                "image": image,
                "instance": f"bench-{uuid.uuid4().hex[:8]}",
                "warm_pool": rounds + 1,  # every bench thread stays warm
            },
        },
    )
    provider = ContainerSandboxProvider(config)
    await provider.start()
    colds: list[float] = []
    sandboxes = []
    for _ in range(rounds):
        sb = await provider.acquire("bench", str(uuid.uuid4()))
        sandboxes.append(sb)
        colds.append(await _timed(lambda sb=sb: sb.execute("echo hi")))
    # Warm: a gateway restart adopts the running containers; each thread's first call.
    await provider.close(keep_containers=True)
    provider = ContainerSandboxProvider(config)
    await provider.start()
    warms: list[float] = []
    for old in sandboxes:
        paths = old.thread_paths
        sb = await provider.acquire(paths.user_id, paths.thread_id)
        warms.append(await _timed(lambda sb=sb: sb.execute("echo hi")))
    sb = await provider.acquire("bench", str(uuid.uuid4()))
    await sb.execute("echo warm-up")
    calls = [await _timed(lambda: sb.execute("echo hi")) for _ in range(rounds)]
    await provider.close()
    return {
        "cold": statistics.median(colds),
        "warm": statistics.median(warms),
        "call": statistics.median(calls),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--image", default="pronghorn-sandbox:latest")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="pronghorn-bench-") as tmp:
        data = Path(tmp)
        results["local none"] = await _bench_local(data, "none", args.rounds)
        path = bwrap.find_bwrap()
        if path is not None and (await bwrap.probe(path, network=False))[0]:
            results["local bwrap"] = await _bench_local(data, "bwrap", args.rounds)
        results["container"] = await _bench_container(data, args.image, args.rounds)
    print(f"{'provider':<12} {'cold ms':>9} {'warm ms':>9} {'call ms':>9}")
    for name, r in results.items():
        print(f"{name:<12} {r['cold']:>9.1f} {r['warm']:>9.1f} {r['call']:>9.1f}")


if __name__ == "__main__":
    asyncio.run(main())
