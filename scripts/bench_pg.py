"""`scripts/bench --postgres`: one gateway on SQLite and one on PostgreSQL + Redis, measured
in the same bench run, rounds interleaved, and the PostgreSQL mode's figures as ratios.

Both processes serve the LLM-free echo graph in `durability: async`; the PostgreSQL one has a
fresh database (created and dropped here; `PRONGHORN_BENCH_POSTGRES_URL`, default the local
server) and `broker.kind: redis` on a random key prefix (`PRONGHORN_BENCH_REDIS_URL`),
removed after. Each round times, for each mode in turn (the order alternates per round),
sequential `runs.wait` on fresh threads (p50), the gateway's CPU time per run over those runs
(`/proc/<pid>/stat`, every thread of the process: load on a shared machine does not inflate
it the way it inflates wall time) and the throughput at concurrency 32. The PostgreSQL
server's CPU per run is the CPU of the backends serving the bench database.

Statements per run are counted with PostgreSQL's own statement log, on a second fresh
database with `log_statement = all` set for that database only (so the timed rounds pay no
logging), by a third gateway process: warm up, then count the log lines of that database
(`statement:` and `execute …:` — one per statement the server ran) over sequential runs. The
log file is `PRONGHORN_BENCH_POSTGRES_LOG` (default Debian's); when it cannot be read the
count is reported as unavailable.

Imported by scripts/bench (which puts backend/src and backend/tests on sys.path).
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from bench_cluster import Database, Process, drop_prefix, pct, progress, throughput

LOG_DEFAULT = "/var/log/postgresql/postgresql-15-main.log"
CLK_TCK = os.sysconf("SC_CLK_TCK")
ENTRY = re.compile(r"^\d{4}-\d\d-\d\d ")
STATEMENT = re.compile(r"LOG:  (?:statement|execute [^:]*): (.*)$")


def msg(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def cpu_s(pid: int) -> float:
    """User + system CPU time of a process, every thread included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Backends:
    """CPU time of the PostgreSQL backends serving one database (read from /proc: the
    bench runs on the database's machine)."""

    def __init__(self, admin_libpq: str, dbname: str) -> None:
        self.admin = admin_libpq
        self.dbname = dbname

    def total(self) -> float:
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as conn:
            pids = [row[0] for row in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.dbname,))]
        total = 0.0
        for pid in pids:
            try:
                total += cpu_s(pid)
            except (FileNotFoundError, PermissionError, ProcessLookupError):
                return float("nan")
        return total


class StatementLog:
    """The lines PostgreSQL's statement log wrote for one database after `mark()`."""

    def __init__(self, path: str, dbname: str) -> None:
        self.path = Path(path)
        self.tag = f"@{dbname} "
        self.offset = 0

    def readable(self) -> bool:
        return os.access(self.path, os.R_OK)

    def mark(self) -> None:
        self.offset = self.path.stat().st_size

    def statements(self) -> list[str]:
        with self.path.open("rb") as f:
            f.seek(self.offset)
            text = f.read().decode(errors="replace")
        entries: list[str] = []
        for line in text.splitlines():  # a multi-line statement goes on in indented lines
            if ENTRY.match(line):
                entries.append(line)
            elif entries:
                entries[-1] += " " + line.strip()
        out = []
        for entry in entries:
            if self.tag not in entry:
                continue
            match = STATEMENT.search(entry)
            if match:
                out.append(match.group(1))
        return out


def shape(sql: str) -> str:
    """A statement's kind, for the per-run breakdown: its first words and table."""
    sql = " ".join(sql.split())
    match = re.match(r"(?i)(insert into \S+|update \S+|delete from \S+|select .*? from \S+|"
                     r"\w+)", sql)
    return (match.group(1) if match else sql)[:90]


class Gateway:
    """A started gateway: its HTTP client and process id."""

    def __init__(self, name: str, api: str, pid: int) -> None:
        self.name = name
        self.pid = pid
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        self.http = httpx.AsyncClient(base_url=api, timeout=httpx.Timeout(120),
                                      transport=httpx.AsyncHTTPTransport(retries=3,
                                                                         limits=limits))

    async def threads(self, n: int) -> list[str]:
        out: list[str] = []
        for _ in range(n):
            resp = await self.http.post("/threads", json={})
            resp.raise_for_status()
            out.append(resp.json()["thread_id"])
        return out

    async def wait(self, tid: str, i: int) -> None:
        body = {"assistant_id": "echo", "input": msg(f"w{i}")}
        resp = await self.http.post(f"/threads/{tid}/runs/wait", json=body)
        if resp.status_code != 200 or "echo:" not in resp.text:
            raise RuntimeError(f"{self.name} runs.wait: {resp.status_code} {resp.text[:200]}")


async def one_round(gw: Gateway, n_lat: int, n_tput: int,
                    backends: Backends | None) -> dict[str, float]:
    tids = await gw.threads(n_lat)
    pg0 = backends.total() if backends else 0.0
    cpu0 = cpu_s(gw.pid)
    lat = []
    for i, tid in enumerate(tids):
        t0 = time.perf_counter()
        await gw.wait(tid, i)
        lat.append(time.perf_counter() - t0)
    out = {"p50": pct(lat, 50), "cpu": (cpu_s(gw.pid) - cpu0) / n_lat}
    if backends:
        out["pg_cpu"] = (backends.total() - pg0) / n_lat
    tids = await gw.threads(n_tput)
    out["tput"] = await throughput(lambda i: gw.wait(tids[i], i), n_tput, 32)
    return out


async def count_statements(admin: str, redis_url: str, log_path: str, n: int,
                           workdir: Path) -> tuple[float, list[tuple[str, float]]] | None:
    db = Database(admin)
    log = StatementLog(log_path, db.name)
    prefix = f"benchpg{uuid.uuid4().hex[:8]}"
    proc = None
    try:
        if not log.readable():
            progress(f"statement log {log_path} not readable: statements not counted")
            return None
        import psycopg

        with psycopg.connect(db._libpq(db.admin), autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{db.name}" SET log_statement = \'all\'')
        proc = Process(workdir, db.url, redis_url, prefix, 10)
        proc.wait_ready()
        gw = Gateway("count", proc.api, proc.proc.pid)
        try:
            tids = await gw.threads(n + 10)
            for i in range(10):
                await gw.wait(tids[i], i)
            await asyncio.sleep(1)  # the warm-up's background writes are logged before
            log.mark()
            for i in range(n):
                await gw.wait(tids[10 + i], i)
            await asyncio.sleep(1)  # the event writer and async checkpoints land
            found = log.statements()
        finally:
            await gw.http.aclose()
        # thread creation is not part of a run: it happened before the mark
        kinds = Counter(shape(s) for s in found)
        return len(found) / n, [(k, c / n) for k, c in kinds.most_common()]
    finally:
        if proc:
            proc.stop()
        db.drop()
        await drop_prefix(redis_url, prefix)


async def run_postgres(quick: bool, sqlite_server: Callable[[Path], Any]) -> None:
    admin = os.environ.get("PRONGHORN_BENCH_POSTGRES_URL",
                           "postgresql://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("PRONGHORN_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
    log_path = os.environ.get("PRONGHORN_BENCH_POSTGRES_LOG", LOG_DEFAULT)
    rounds = 5 if quick else 7
    n_lat, n_tput = (40, 160) if quick else (100, 400)
    started = time.monotonic()
    load_before = loadavg()
    results: dict[str, list[dict[str, float]]] = {"sqlite": [], "postgres": []}
    with tempfile.TemporaryDirectory() as tmp:
        counted = await count_statements(admin, redis_url, log_path, 50,
                                         Path(tmp) / "count")
        if counted:
            progress(f"statements per run: {counted[0]:.1f}")
            for kind, per_run in counted[1]:
                progress(f"  {per_run:5.2f} {kind}")
        db = Database(admin)
        prefix = f"benchpg{uuid.uuid4().hex[:8]}"
        sq_dir = Path(tmp) / "sqlite"
        sq_dir.mkdir()
        sq = pg = None
        try:
            pg = Process(Path(tmp) / "pg", db.url, redis_url, prefix, 20)
            pg.wait_ready()
            sq = sqlite_server(sq_dir)
            gws = {"sqlite": Gateway("sqlite", sq.api, sq.proc.pid),
                   "postgres": Gateway("postgres", pg.api, pg.proc.pid)}
            backends = Backends(db._libpq(db.admin), db.name)
            for name, gw in gws.items():  # warm up
                for i, tid in enumerate(await gw.threads(20)):
                    await gw.wait(tid, i)
                progress(f"{name} warm")
            for r in range(rounds):
                order = ("sqlite", "postgres") if r % 2 == 0 else ("postgres", "sqlite")
                for name in order:
                    res = await one_round(gws[name], n_lat, n_tput,
                                          backends if name == "postgres" else None)
                    results[name].append(res)
                    progress(f"round {r + 1} {name}: p50 {res['p50'] * 1000:.1f} ms, "
                             f"CPU {res['cpu'] * 1000:.1f} ms/run, {res['tput']:.0f} runs/s")
            for gw in gws.values():
                await gw.http.aclose()
        finally:
            if sq:
                sq.stop()
            if pg:
                pg.stop()
            db.drop()
            await drop_prefix(redis_url, prefix)
    print_table(results, counted, rounds, load_before, loadavg())
    print(f"\n({time.monotonic() - started:.0f} s, {os.cpu_count()} cores, quick={quick})")


def print_table(results: dict[str, list[dict[str, float]]],
                counted: tuple[float, list[tuple[str, float]]] | None, rounds: int,
                load_before: str, load_after: str) -> None:
    sq, pg = results["sqlite"], results["postgres"]

    def med(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    def span(rows: list[dict[str, float]], key: str, scale: float = 1000) -> str:
        values = [r[key] * scale for r in rows]
        return f"{min(values):.1f}–{max(values):.1f}"

    def ratio(key: str, target: str) -> str:
        values = [p[key] / s[key] for s, p in zip(sq, pg, strict=True)]
        return (f"**{statistics.median(values):.2f}×** (rounds {min(values):.2f}–"
                f"{max(values):.2f}×) | {target}")

    print(f"\nSQLite vs PostgreSQL + Redis, one process each, {rounds} interleaved rounds; "
          f"load average {load_before} before, {load_after} after\n")
    print("| measure | SQLite | PostgreSQL + Redis | PG ÷ SQLite, per round | target |")
    print("|---|---|---|---|---|")
    print(f"| `runs.wait` p50 | {med(sq, 'p50') * 1000:.1f} ms ({span(sq, 'p50')}) | "
          f"{med(pg, 'p50') * 1000:.1f} ms ({span(pg, 'p50')}) | {ratio('p50', '≤ 2×')} |")
    print(f"| gateway CPU per run | {med(sq, 'cpu') * 1000:.1f} ms ({span(sq, 'cpu')}) | "
          f"{med(pg, 'cpu') * 1000:.1f} ms ({span(pg, 'cpu')}) | {ratio('cpu', '≤ 1.5×')} |")
    print(f"| throughput @32 | {med(sq, 'tput'):.0f} runs/s ({span(sq, 'tput', 1)}) | "
          f"{med(pg, 'tput'):.0f} runs/s ({span(pg, 'tput', 1)}) | {ratio('tput', '')} |")
    print(f"| PostgreSQL backends' CPU per run | – | {med(pg, 'pg_cpu') * 1000:.1f} ms "
          f"({span(pg, 'pg_cpu')}) | | |")
    if counted:
        print(f"| statements per run (PostgreSQL's statement log) | – | "
              f"**{counted[0]:.1f}** | | ≤ 20 |")
        print("\nStatements per run, by kind:\n")
        print("| statement | per run |\n|---|---|")
        for kind, per_run in counted[1]:
            print(f"| `{kind}` | {per_run:.2f} |")
    else:
        print("| statements per run | – | not counted (statement log unreadable) | | ≤ 20 |")
