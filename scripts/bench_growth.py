"""`scripts/bench --growth`: does a turn, a search or a listing cost more as work piles up?

On one gateway (SQLite, `durability: async`, the echo graph):

- **history length**: one thread is taken to 1, 100 and 1,000 prior turns; at each point
  `N_TURN` more `runs.wait` are timed (p50) with the gateway's CPU time per run, and the same
  graph in-process on LangGraph's stock `AsyncSqliteSaver` at the same history length — the
  graph's own cost, which grows with its state (`add_messages` keeps every message, and each
  checkpoint stores the whole list) and which the gateway cannot avoid;
- **database size per turn**: the database's used pages (`page_count − freelist_count`,
  read through a read-only connection, WAL included) over the 1,000 turns;
- **listing and search with 100,000 rows**: 100,000 threads, 100,000 runs (1,000 on each of
  100 threads) and 100,000 store items (100 in each of 1,000 namespaces) are added by cloning
  one row the API created (SQL straight into the database file, one transaction each; the
  gateway keeps running), then `threads.search` (no filter, a status filter, a metadata
  filter), `runs.list` of one thread (no filter, a status filter) and `store.search` (a
  namespace prefix, with a value filter) are timed (p50 of `N_QUERY` each).

Imported by scripts/bench (which puts backend/src and backend/tests on sys.path).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
from bench_pg import cpu_s, loadavg, msg, pct

ROWS = 100_000
N_TURN = 30
N_QUERY = 50


def used_bytes(db_file: Path) -> int:
    conn = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    try:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return (pages - free) * size
    finally:
        conn.close()


def earlier(column: str) -> str:
    """The template row's time minus i seconds, in the gateway's SQLite format: clones are
    older than the rows the API writes, and no two share a time (the listings sort on it)."""
    return (f"strftime('%Y-%m-%d %H:%M:%S', t.{column}, '-' || i || ' seconds') "
            f"|| '.' || printf('%06d', i % 1000000)")


def clone(db_file: Path, table: str, where: str, params: tuple[Any, ...],
          replace: dict[str, str], count: int) -> None:
    """`count` copies of one row of `table`, with some columns computed from `i` (1..count)."""
    conn = sqlite3.connect(db_file, timeout=60)
    try:
        cols = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
        exprs = [replace.get(c, f't."{c}"') for c in cols]
        names = ", ".join(f'"{c}"' for c in cols)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) "
            f'INSERT INTO "{table}" ({names}) SELECT {", ".join(exprs)} '
            f'FROM n, "{table}" AS t WHERE {where}', params)
        conn.execute("COMMIT")
    finally:
        conn.close()


@contextlib.asynccontextmanager
async def stock_graph(d: str) -> AsyncIterator[Any]:
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from testgraphs.echo import graph

    from pronghorn.persistence.db import SQLITE_PRAGMAS

    conn = await aiosqlite.connect(f"{d}/b.db")
    for pragma in SQLITE_PRAGMAS:
        await conn.execute(pragma)
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    try:
        yield graph.copy(update={"checkpointer": saver})
    finally:
        await conn.close()


async def timed(fn: Callable[[int], Any], n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        await fn(i)
        out.append(time.perf_counter() - t0)
    return out


async def history(http: httpx.AsyncClient, pid: int, db_file: Path,
                  rows: list[tuple[str, str, str]]) -> None:
    tid = (await http.post("/threads", json={})).json()["thread_id"]
    turns = 0

    async def turn(i: int) -> None:
        resp = await http.post(f"/threads/{tid}/runs/wait",
                               json={"assistant_id": "echo", "input": msg(f"turn {i}")})
        if resp.status_code != 200:
            raise RuntimeError(f"runs.wait: {resp.status_code} {resp.text[:200]}")

    with tempfile.TemporaryDirectory() as d:
        async with stock_graph(d) as g:
            cfg = {"configurable": {"thread_id": "h"}}

            async def base(i: int) -> None:
                await g.ainvoke(msg(f"turn {i}"), cfg, durability="async")

            base_turns = 0
            sizes = [(turns, used_bytes(db_file))]
            for target in (1, 100, 1000):
                while turns < target:
                    await turn(turns)
                    turns += 1
                sizes.append((turns, used_bytes(db_file)))
                while base_turns < target:
                    await base(base_turns)
                    base_turns += 1
                cpu0 = cpu_s(pid)
                lat = await timed(turn, N_TURN)
                cpu = (cpu_s(pid) - cpu0) / N_TURN
                turns += N_TURN
                blat = await timed(base, N_TURN)
                base_turns += N_TURN
                rows.append((f"runs.wait, thread with {target} prior turns",
                             f"p50 {pct(lat, 50) * 1000:.1f} ms · CPU {cpu * 1000:.1f} ms/run",
                             f"in-process stock saver, same history: p50 "
                             f"{statistics.median(blat) * 1000:.1f} ms · gateway ÷ it "
                             f"{pct(lat, 50) / statistics.median(blat):.2f}×"))
                print(f"  {time.strftime('%H:%M:%S')} {rows[-1]}", flush=True)
                if len(sizes) > 2:  # the turns up to this target, the timed ones excluded
                    (t0, s0), (t1, s1) = sizes[-2], sizes[-1]
                    rows.append((f"database size per turn, turns {t0}–{t1}",
                                 f"{(s1 - s0) / (t1 - t0) / 1024:.1f} KiB",
                                 f"{s0 / 1e6:.1f} → {s1 / 1e6:.1f} MB used pages"))
                    print(f"  {time.strftime('%H:%M:%S')} {rows[-1]}", flush=True)
                sizes[-1] = (turns, used_bytes(db_file))


async def big_tables(http: httpx.AsyncClient, db_file: Path,
                     rows: list[tuple[str, str, str]]) -> None:
    tid = (await http.post("/threads", json={"metadata": {"user": "u0"}})).json()["thread_id"]
    resp = await http.post(f"/threads/{tid}/runs/wait",
                           json={"assistant_id": "echo", "input": msg("template")})
    resp.raise_for_status()
    await http.put("/store/items", json={"namespace": ["bench", "u0"], "key": "k0",
                                         "value": {"n": 0, "kind": "a"}})
    run_id = (await http.get(f"/threads/{tid}/runs")).json()[0]["run_id"]
    t0 = time.perf_counter()
    clone(db_file, "threads", "t.thread_id = ?", (tid,), {
        "thread_id": "printf('00000000-0000-4000-8000-%012d', i)",
        "metadata": "json_object('user', 'u' || (i % 1000))",
        "status": "CASE WHEN i % 10 = 0 THEN 'busy' ELSE 'idle' END",
        **{c: earlier(c) for c in ("created_at", "updated_at", "state_updated_at")},
    }, ROWS)
    clone(db_file, "runs", "t.run_id = ?", (run_id,), {
        "run_id": "printf('00000000-0000-4000-9000-%012d', i)",
        "thread_id": "printf('00000000-0000-4000-8000-%012d', 1 + i % 100)",
        "status": "CASE WHEN i % 7 = 0 THEN 'error' ELSE 'success' END",
        **{c: earlier(c) for c in ("created_at", "updated_at")},
    }, ROWS)
    # the store keeps each user's items under a prefix of their own (`__user__.<id>.`)
    clone(db_file, "store", "t.prefix LIKE '%bench.u0' AND t.key = 'k0'", (), {
        "prefix": "replace(t.prefix, 'bench.u0', 'bench.u' || (i % 1000))",
        "key": "'k' || i",
        "value": "json_object('n', i, 'kind', CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END)",
    }, ROWS)
    rows.append((f"{ROWS:,} threads, runs and store items added (SQL)",
                 f"{time.perf_counter() - t0:.1f} s", ""))

    hot = "00000000-0000-4000-8000-000000000007"
    checks: list[tuple[str, Callable[[], Any]]] = [
        ("threads.search, no filter, limit 10",
         lambda: http.post("/threads/search", json={"limit": 10})),
        ("threads.search, status busy, limit 10",
         lambda: http.post("/threads/search", json={"status": "busy", "limit": 10})),
        ("threads.search, metadata {user: u7}, limit 10",
         lambda: http.post("/threads/search", json={"metadata": {"user": "u7"}, "limit": 10})),
        ("runs.list, a thread with 1,000 runs, limit 10",
         lambda: http.get(f"/threads/{hot}/runs", params={"limit": 10})),
        ("runs.list, a thread with 1,000 runs, status error, limit 10",
         lambda: http.get(f"/threads/{hot}/runs", params={"limit": 10, "status": "error"})),
        ("store.search, namespace prefix [bench, u7], limit 10",
         lambda: http.post("/store/items/search",
                           json={"namespace_prefix": ["bench", "u7"], "limit": 10})),
        ("store.search, prefix [bench] + value filter, limit 10",
         lambda: http.post("/store/items/search",
                           json={"namespace_prefix": ["bench"], "filter": {"kind": "b"},
                                 "limit": 10})),
    ]
    for name, call in checks:
        async def once(_: int, call: Callable[[], Any] = call, name: str = name) -> None:
            resp = await call()
            body = resp.json()
            if resp.status_code != 200 or not (body.get("items") if isinstance(body, dict)
                                               else body):
                raise RuntimeError(f"{name}: {resp.status_code} {resp.text[:200]}")

        await once(0)  # a first call may warm a cache
        lat = await timed(once, N_QUERY)
        rows.append((f"{name} ({ROWS:,} rows)", f"p50 {pct(lat, 50) * 1000:.1f} ms",
                     f"p95 {pct(lat, 95) * 1000:.1f} ms · target p50 < 20 ms"))
        print(f"  {time.strftime('%H:%M:%S')} {rows[-1]}", flush=True)


async def run_growth(server_factory: Callable[[Path], Any],
                     parts: tuple[str, ...] = ("history", "tables")) -> None:
    started = time.monotonic()
    load_before = loadavg()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        srv = server_factory(Path(tmp))
        db_file = Path(tmp) / "data" / "pronghorn.db"
        try:
            async with httpx.AsyncClient(base_url=srv.api, timeout=httpx.Timeout(120)) as http:
                for i in range(10):  # warm up
                    tid = (await http.post("/threads", json={})).json()["thread_id"]
                    await http.post(f"/threads/{tid}/runs/wait",
                                    json={"assistant_id": "echo", "input": msg(f"w{i}")})
                if "history" in parts:
                    await history(http, srv.proc.pid, db_file, rows)
                if "tables" in parts:
                    await big_tables(http, db_file, rows)
        finally:
            srv.stop()
    print(f"\nGrowth, SQLite, one process; load average {load_before} before, "
          f"{loadavg()} after\n")
    print("| measure | result | detail |\n|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {a} | {b} |")
    print(f"\n({time.monotonic() - started:.0f} s, {os.cpu_count()} cores)")
