"""`scripts/bench --cluster`: the LLM-free echo graph against 1, 2 and 4 `pronghorn serve`
processes sharing one PostgreSQL database (fresh for each cluster size, dropped after) and
one Redis (a random key prefix, removed after), on loopback.

Clients are spread over the processes round-robin (request i goes to process i mod n), as a
load balancer without sticky sessions would. Per cluster size it reports runs.wait p50,
throughput at concurrency 32 and 128, the join latency of a run created on one process and
joined on another against one joined where it was created, and 500 concurrent 2 s streams
(error count). Every loop is bounded in count; the caller's alarm bounds the wall time.

Imported by scripts/bench (which puts backend/src and backend/tests on sys.path).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "backend" / "tests"
SIZES = (1, 2, 4)
# PostgreSQL connections for the whole cluster (the server allows 100 by default): each
# process may open 2 × pool_size (SQLAlchemy pool + overflow) + pool_size (checkpointer).
CONNECTION_BUDGET = 78
DEADLINE_S = 1500  # the whole cluster benchmark never runs longer than this


def pool_size(processes: int) -> int:
    return max(4, CONNECTION_BUDGET // (3 * processes))
STREAMS = 500


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def msg(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def progress(text: str) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(p / 100 * (len(values) - 1))))
    return values[k]


class Database:
    """A fresh PostgreSQL database on the server at `admin_url` (libpq form)."""

    def __init__(self, admin_url: str) -> None:
        import psycopg
        from sqlalchemy.engine import make_url

        self._psycopg = psycopg
        self.admin = make_url(admin_url).set(drivername="postgresql")
        self.name = f"pronghorn_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self._libpq(self.admin), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')

    @staticmethod
    def _libpq(url) -> str:
        return url.render_as_string(hide_password=False)

    @property
    def url(self) -> str:
        url = self.admin.set(drivername="postgresql", database=self.name)
        return url.render_as_string(hide_password=False)

    def drop(self) -> None:
        with self._psycopg.connect(self._libpq(self.admin), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


class Process:
    """One `pronghorn serve` on a free port, on the shared database and Redis."""

    def __init__(
        self, workdir: Path, db_url: str, redis_url: str, prefix: str, pool: int
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.port = free_port()
        (workdir / "config.yaml").write_text(
            "data_dir: data\n"
            "logging: {level: WARNING}\n"
            "auth: {mode: none}\n"  # loopback only; measures the engine, not logins
            "runs: {max_concurrency: 600, durability: async}\n"
            f"database: {{url: '{db_url}', pool_size: {pool}}}\n"
            f"broker: {{kind: redis, redis_url: '{redis_url}', key_prefix: '{prefix}'}}\n"
            "graphs:\n  echo: testgraphs.echo:graph\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRONGHORN_")}
        env["PYTHONPATH"] = os.pathsep.join((str(TESTS), str(ROOT / "backend" / "src")))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pronghorn.cli", "serve", "--port", str(self.port),
             "--config", str(workdir / "config.yaml")],
            cwd=workdir, env=env, stdout=subprocess.DEVNULL,
            stderr=open(workdir / "server.log", "wb"),  # noqa: SIM115
        )  # fmt: skip

    def wait_ready(self) -> None:
        url = f"http://127.0.0.1:{self.port}/ready"
        deadline = time.monotonic() + 400  # a loaded machine takes a while to import it all
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.proc.kill()
        log = (self.workdir / "server.log").read_text(errors="replace")[-2000:]
        raise SystemExit(f"gateway process did not start:\n{log}")

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/langgraph"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


async def throughput(fn: Callable[[int], Awaitable[object]], total: int, conc: int) -> float:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)

    async def worker() -> None:
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await fn(i)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conc)))
    return total / (time.perf_counter() - t0)


class Cluster:
    """HTTP clients on each process; request i goes to process i mod n."""

    def __init__(self, procs: list[Process]) -> None:
        limits = httpx.Limits(max_connections=STREAMS + 50, max_keepalive_connections=256)
        self.clients = [
            httpx.AsyncClient(
                base_url=p.api,
                transport=httpx.AsyncHTTPTransport(retries=3, limits=limits),
                timeout=httpx.Timeout(120),
            )
            for p in procs
        ]

    def at(self, i: int) -> httpx.AsyncClient:
        return self.clients[i % len(self.clients)]

    async def thread(self, i: int) -> str:
        resp = await self.at(i).post("/threads", json={})
        resp.raise_for_status()
        return resp.json()["thread_id"]

    async def threads(self, n: int) -> list[str]:
        out: list[str] = []
        for start in range(0, n, 64):
            out += await asyncio.gather(*(self.thread(i) for i in range(start, min(n, start + 64))))
        return out

    async def wait(self, i: int, tid: str) -> None:
        body = {"assistant_id": "echo", "input": msg(f"w{i}")}
        resp = await self.at(i).post(f"/threads/{tid}/runs/wait", json=body)
        if resp.status_code != 200 or "echo:" not in resp.text:
            raise RuntimeError(f"runs.wait: {resp.status_code} {resp.text[:200]}")

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


async def join_latency(cluster: Cluster, rounds: int) -> tuple[float, float]:
    """(p50 same-process, p50 cross-process) of create-then-join, alternated per round so the
    machine's load changes hit both alike. With one process both are the same process."""
    n = len(cluster.clients)
    same: list[float] = []
    cross: list[float] = []
    for r in range(rounds):
        for where, out in ((r, same), (r + 1, cross)):
            origin = cluster.at(r)
            tid = await cluster.thread(r)
            t0 = time.perf_counter()
            body = {"assistant_id": "echo", "input": msg(f"j{r}")}
            run = (await origin.post(f"/threads/{tid}/runs", json=body)).json()
            joiner = cluster.at(where) if n > 1 else origin
            resp = await joiner.get(f"/threads/{tid}/runs/{run['run_id']}/join")
            out.append(time.perf_counter() - t0)
            if resp.status_code != 200:
                raise RuntimeError(f"join: {resp.status_code} {resp.text[:200]}")
    return pct(same, 50), pct(cross, 50)


async def streams(cluster: Cluster, count: int) -> tuple[float, int]:
    """`count` concurrent 2 s streams spread over the processes: (wall s, errors)."""
    tids = await cluster.threads(count)
    errors = 0
    reasons: dict[str, int] = {}
    samples: dict[str, str] = {}

    async def one(i: int) -> None:
        nonlocal errors
        body = {"assistant_id": "echo", "input": {**msg(f"s{i}"), "sleep": 2},
                "stream_mode": "updates"}  # fmt: skip
        data = b""
        async with cluster.at(i).stream("POST", f"/threads/{tids[i]}/runs/stream",
                                        json=body) as resp:  # fmt: skip
            async for chunk in resp.aiter_raw():
                data += chunk
        if resp.status_code != 200 or data.count(b"event: updates") != 2:
            errors += 1
            reason = f"{resp.status_code}: {data[-160:]!r}"
            reasons[reason[:60]] = reasons.get(reason[:60], 0) + 1
            samples.setdefault(reason[:60], reason)

    t0 = time.perf_counter()
    results = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    errors += len(failures)
    kinds: dict[str, int] = {}
    for failure in failures:
        kinds[type(failure).__name__] = kinds.get(type(failure).__name__, 0) + 1
    if kinds:
        progress(f"stream failures by kind: {kinds}")
    for key, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:3]:
        progress(f"{n} streams failed like: {samples[key]}")
    return time.perf_counter() - t0, errors


async def measure(procs: list[Process], quick: bool) -> dict[str, float]:
    n_lat = 60 if quick else 150
    n_tput = 300 if quick else 800
    cluster = Cluster(procs)
    try:
        warm = await cluster.threads(8 * len(procs))
        await asyncio.gather(*(cluster.wait(i, t) for i, t in enumerate(warm)))
        out: dict[str, float] = {}
        tids = await cluster.threads(n_lat)
        lat = []
        for i, tid in enumerate(tids):
            t0 = time.perf_counter()
            await cluster.wait(i, tid)
            lat.append(time.perf_counter() - t0)
        out["wait_p50"] = pct(lat, 50)
        progress(f"runs.wait p50 {out['wait_p50'] * 1000:.1f} ms")
        for conc in (32, 128):
            tids = await cluster.threads(n_tput)
            out[f"rps{conc}"] = await throughput(
                lambda i, tids=tids: cluster.wait(i, tids[i]), n_tput, conc
            )
            progress(f"@{conc}: {out[f'rps{conc}']:.1f} runs/s")
        out["join_same"], out["join_cross"] = await join_latency(cluster, 30 if quick else 80)
        same, cross = out["join_same"] * 1000, out["join_cross"] * 1000
        progress(f"join same {same:.1f} ms, cross {cross:.1f} ms")
        out["streams_wall"], out["streams_errors"] = await streams(cluster, STREAMS)
        progress(f"streams {out['streams_wall']:.1f} s, {out['streams_errors']:.0f} errors")
        return out
    finally:
        await cluster.aclose()


def main(quick: bool) -> None:
    """Bounded: after DEADLINE_S the run is cancelled, and its processes, database and
    Redis keys are still cleaned up."""

    def expire(*_: object) -> None:
        raise TimeoutError(f"the cluster benchmark ran past {DEADLINE_S} s")

    signal.signal(signal.SIGALRM, expire)
    signal.alarm(DEADLINE_S)
    try:
        asyncio.run(run_cluster(quick))
    finally:
        signal.alarm(0)


async def run_cluster(quick: bool) -> None:
    admin = os.environ.get(
        "PRONGHORN_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
    )
    redis_url = os.environ.get("PRONGHORN_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
    started = time.monotonic()
    results: dict[int, dict[str, float]] = {}
    for n in SIZES:
        db = Database(admin)
        prefix = f"bench{uuid.uuid4().hex[:8]}"
        procs: list[Process] = []
        try:
            with tempfile.TemporaryDirectory() as tmp:
                # The first process migrates the fresh database; the others start after it.
                pool = pool_size(n)
                procs.append(Process(Path(tmp) / "p0", db.url, redis_url, prefix, pool))
                procs[0].wait_ready()
                for k in range(1, n):
                    procs.append(Process(Path(tmp) / f"p{k}", db.url, redis_url, prefix, pool))
                for proc in procs[1:]:
                    proc.wait_ready()
                progress(f"{n} process(es) up (pool_size {pool}); measuring …")
                try:
                    results[n] = await measure(procs, quick)
                finally:
                    for k, proc in enumerate(procs):
                        text = (proc.workdir / "server.log").read_text(errors="replace")
                        lines = [ln for ln in text.splitlines() if "ERROR" in ln]
                        if lines:
                            progress(f"p{k}: {len(lines)} ERROR lines, last: {lines[-1][:300]}")
                for proc in procs:
                    proc.stop()
                procs = []
        finally:
            for proc in procs:
                proc.stop()
            db.drop()
            await drop_prefix(redis_url, prefix)
    print_table(results)
    print(f"\n({time.monotonic() - started:.0f} s, {os.cpu_count()} cores, quick={quick})")


async def drop_prefix(redis_url: str, prefix: str) -> None:
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    try:
        batch: list[bytes] = []
        async for key in client.scan_iter(match=f"{prefix}:*", count=500):
            batch.append(key)
            if len(batch) >= 500:
                await client.delete(*batch)
                batch = []
        if batch:
            await client.delete(*batch)
    finally:
        await client.aclose()


def print_table(results: dict[int, dict[str, float]]) -> None:
    def ms(v: float) -> str:
        return f"{v * 1000:.1f} ms"

    one = results[SIZES[0]]
    print("\n| processes | runs.wait p50 | runs/s @32 | runs/s @128 | ×1 @32 | "
          "join p50 same / cross (added) | 500 × 2 s streams |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for n, r in results.items():
        added = r["join_cross"] - r["join_same"]
        join = (f"{ms(r['join_same'])} / {ms(r['join_cross'])} ({added * 1000:+.1f} ms)"
                if n > 1 else f"{ms(r['join_same'])} / –")  # fmt: skip
        print(f"| {n} | {ms(r['wait_p50'])} | {r['rps32']:.0f} | {r['rps128']:.0f} | "
              f"{r['rps32'] / one['rps32']:.2f}× | {join} | "
              f"{r['streams_wall']:.1f} s wall, {int(r['streams_errors'])} errors |")
