"""`scripts/bench --streams N`: N live SSE streams on one gateway process.

One `pronghorn serve` (SQLite, the echo graph, `runs.max_concurrency` above N so no run
queues) gets N `runs.stream` requests of a 30 s run (`"sleep": 30`), started at RATE per
second, read with plain httpx (clients of 100 connections each, so no client's pool grows
large), all N live together for at least a few seconds. Per stream: the time from sending the
request to the first SSE event (`metadata`), and an error when the answer is not 200, an
`error` event arrives or the stream does not end with the run's two `updates`. The server's
RSS (`VmRSS`) and open file descriptors are sampled every second; memory per stream is the
peak RSS minus the RSS before, over N.

The bench process raises its own soft file-descriptor limit to the hard one (each stream is a
socket on both sides); the server inherits it.

Imported by scripts/bench (which puts backend/src and backend/tests on sys.path).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from bench_pg import cpu_s, loadavg, msg, pct

RATE = 100  # streams started per second
RUN_S = 30
PER_CLIENT = 100


def raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < needed:
        print(f"  the hard fd limit ({hard}) is below the {needed} this needs", flush=True)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def run_streams(n: int, server_factory: Callable[[Path, int], Any], workdir: Path) -> None:
    soft_before = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    raise_fd_limit(2 * n + 200)
    soft_after = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    load_before = loadavg()
    srv = server_factory(workdir, n + 100)
    pid = srv.proc.pid
    clients = [
        httpx.AsyncClient(
            base_url=srv.api,
            timeout=httpx.Timeout(RUN_S + 90),
            limits=httpx.Limits(max_connections=PER_CLIENT, max_keepalive_connections=PER_CLIENT),
        )
        for _ in range((n + PER_CLIENT - 1) // PER_CLIENT)
    ]
    first: list[float] = []
    errors: dict[str, int] = {}
    live = 0
    peak_live = 0
    samples: list[tuple[float, float, int]] = []
    try:
        http = clients[0]
        for i in range(5):  # warm up
            tid = (await http.post("/threads", json={})).json()["thread_id"]
            await http.post(f"/threads/{tid}/runs/wait",
                            json={"assistant_id": "echo", "input": msg(f"w{i}")})
        tids: list[str] = []
        for start in range(0, n, 50):
            batch = [clients[(start + k) // PER_CLIENT].post("/threads", json={})
                     for k in range(min(50, n - start))]
            tids += [r.json()["thread_id"] for r in await asyncio.gather(*batch)]
        rss0, fds0, cpu0 = rss_mb(pid), open_fds(pid), cpu_s(pid)

        def fail(reason: str) -> None:
            errors[reason] = errors.get(reason, 0) + 1

        async def one(i: int) -> None:
            nonlocal live, peak_live
            body = {"assistant_id": "echo", "input": {**msg(f"s{i}"), "sleep": RUN_S},
                    "stream_mode": "updates"}
            data = b""
            t0 = time.perf_counter()
            got_first = False
            try:
                async with clients[i // PER_CLIENT].stream(
                        "POST", f"/threads/{tids[i]}/runs/stream", json=body) as resp:
                    async for chunk in resp.aiter_raw():
                        data += chunk
                        if not got_first and b"event:" in data:
                            got_first = True
                            first.append(time.perf_counter() - t0)
                            live += 1
                            peak_live = max(peak_live, live)
                if resp.status_code != 200:
                    fail(f"HTTP {resp.status_code}")
                elif b"event: error" in data:
                    fail("error event")
                elif data.count(b"event: updates") != 2:
                    fail("incomplete stream")
            except httpx.HTTPError as exc:
                fail(type(exc).__name__)
            finally:
                if got_first:
                    live -= 1

        async def sample(stop: asyncio.Event) -> None:
            t0 = time.perf_counter()
            while not stop.is_set():
                samples.append((time.perf_counter() - t0, rss_mb(pid), open_fds(pid)))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1)

        stop = asyncio.Event()
        sampler = asyncio.create_task(sample(stop))
        t0 = time.perf_counter()
        tasks = []
        for i in range(n):
            delay = t0 + i / RATE - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i)))
        ramp = time.perf_counter() - t0
        await asyncio.gather(*tasks)
        wall = time.perf_counter() - t0
        stop.set()
        await sampler
        cpu = cpu_s(pid) - cpu0
    finally:
        for client in clients:
            await client.aclose()
        srv.stop()
    peak_rss = max(s[1] for s in samples)
    peak_fds = max(s[2] for s in samples)
    n_err = sum(errors.values())
    print(f"\n{n} concurrent SSE streams of {RUN_S} s runs, started at {RATE}/s, one process "
          f"(SQLite); load average {load_before} before, {loadavg()} after; bench fd limit "
          f"{soft_before} → {soft_after}\n")
    print("| measure | result | detail |\n|---|---|---|")
    print(f"| streams live together (peak) | {peak_live} of {n} | ramp {ramp:.1f} s, "
          f"wall {wall:.1f} s |")
    print(f"| errors | **{n_err}** | {errors or 'none'} |")
    if first:
        print(f"| first event after the request | p50 {pct(first, 50) * 1000:.0f} ms · "
              f"p99 **{pct(first, 99) * 1000:.0f} ms** | max {max(first) * 1000:.0f} ms · "
              f"target p99 < 1 s |")
    print(f"| server RSS | before {rss0:.0f} MB · peak **{peak_rss:.0f} MB** | target < 800 MB |")
    print(f"| memory per live stream | {(peak_rss - rss0) * 1024 / n:.0f} KiB | "
          f"(peak − before) / {n} |")
    print(f"| server open file descriptors | before {fds0} · peak {peak_fds} | |")
    print(f"| server CPU | {cpu:.1f} s | {cpu / n * 1000:.1f} ms per stream |")
