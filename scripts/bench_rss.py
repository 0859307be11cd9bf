"""Server memory under sustained load: rounds of 200 concurrent streams and 2,000 runs.

Called by `scripts/bench --rss-rounds N` (which passes its server and helpers in). Each
round: 200 concurrent ~2 s streams read with plain httpx, then 2,000 `runs.wait` at
concurrency 32 over 200 threads; the server's RSS is read before the first round and after
each one. A server that leaks grows by about the same amount every round; one that levels
off grows in the first round (caches, pools, allocator arenas) and little after.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

STREAMS = 200
RUNS = 2000
CONCURRENCY = 32


async def _streams(http: httpx.AsyncClient, tids: list[str], msg: Callable[[str], dict]) -> int:
    errors = 0

    async def one(i: int) -> None:
        nonlocal errors
        body = {"assistant_id": "echo", "input": {**msg(f"h{i}"), "sleep": 2},
                "stream_mode": "updates"}
        data = b""
        async with http.stream("POST", f"/threads/{tids[i]}/runs/stream", json=body) as resp:
            async for chunk in resp.aiter_raw():
                data += chunk
        if resp.status_code != 200 or data.count(b"event: updates") != 2:
            errors += 1

    results = await asyncio.gather(*(one(i) for i in range(STREAMS)), return_exceptions=True)
    return errors + sum(1 for r in results if isinstance(r, Exception))


async def _runs(http: httpx.AsyncClient, tids: list[str], msg: Callable[[str], dict]) -> int:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(RUNS):
        queue.put_nowait(i)
    errors = 0

    async def worker() -> None:
        nonlocal errors
        while not queue.empty():
            i = queue.get_nowait()
            body = {"assistant_id": "echo", "input": msg(f"r{i}")}
            resp = await http.post(f"/threads/{tids[i % len(tids)]}/runs/wait", json=body)
            if resp.status_code != 200:
                errors += 1

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return errors


async def rounds(count: int, server_factory: Callable[[Path], Any],
                 msg: Callable[[str], dict], rss_kb: Callable[[int], int],
                 workdir: Path) -> None:
    srv = server_factory(workdir)
    started = time.monotonic()
    try:
        limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
        async with httpx.AsyncClient(base_url=srv.api, timeout=httpx.Timeout(120),
                                     transport=httpx.AsyncHTTPTransport(retries=5,
                                                                        limits=limits)) as http:

            async def new_threads(n: int) -> list[str]:
                return [(await http.post("/threads", json={})).json()["thread_id"]
                        for _ in range(n)]

            for i in range(20):  # warm up
                tid = (await new_threads(1))[0]
                await http.post(f"/threads/{tid}/runs/wait",
                                json={"assistant_id": "echo", "input": msg(f"w{i}")})
            start_rss = previous = rss_kb(srv.proc.pid)
            rows = [("start (after 20 warm-up runs)", start_rss, 0, 0, 0.0)]
            for n in range(1, count + 1):
                t0 = time.perf_counter()
                stream_errors = await _streams(http, await new_threads(STREAMS), msg)
                run_errors = await _runs(http, await new_threads(STREAMS), msg)
                rss = rss_kb(srv.proc.pid)
                rows.append((f"round {n}", rss, rss - previous, stream_errors + run_errors,
                             time.perf_counter() - t0))
                previous = rss
    finally:
        srv.stop()
    print(f"\n{count} rounds of {STREAMS} concurrent 2 s streams + {RUNS} runs.wait "
          f"@{CONCURRENCY}\n")
    print("| | server RSS | growth in the round | errors | round time |\n|---|---|---|---|---|")
    for name, rss, growth, errors, wall in rows:
        print(f"| {name} | {rss / 1024:.1f} MB | {growth / 1024:+.1f} MB | {errors} | "
              f"{wall:.0f} s |")
    print(f"\ntotal growth {(previous - start_rss) / 1024:+.1f} MB "
          f"({time.monotonic() - started:.0f} s)")
