"""Gateway replicas as real processes (`pronghorn serve`, tests/support/live.py) sharing
a fresh PostgreSQL database and one Redis (a random key prefix per test): the scale-out
deployment of issue 14. Skipped with a clear message when either is absent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url

from pronghorn.persistence.tables import metadata
from runs.backends import PG_URL, database
from support.live import LiveServer, base_config
from support.redis_kit import REDIS_URL, drop_prefix, new_prefix, require_redis

# Real processes on a loaded machine: starting one takes a while.
TIMEOUT = pytest.mark.timeout(600)

API = "/api/langgraph"
GRAPHS = {"clustered": "testgraphs.clustered:graph", "chatty": "testgraphs.chatty:graph"}
LEASE_S = 5.0  # the recovery tests' lease (the others keep the default, 10 s)


def require_cluster() -> None:
    if not PG_URL:
        pytest.skip("scale-out tests need PostgreSQL: set PRONGHORN_TEST_POSTGRES_URL")
    require_redis()


class Replica(LiveServer):
    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=120)

    def pause(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


@contextlib.contextmanager
def cluster(workdir: Path) -> Iterator[Callable[..., Replica]]:
    """A fresh PostgreSQL database and Redis prefix; `start(runs={...}, server={...})`
    starts one more replica on them (one after the other: the first migrates)."""
    require_cluster()
    prefix = new_prefix()
    started: list[Replica] = []
    with database("postgres", workdir) as (db_cfg, _):

        def start(**overrides: Any) -> Replica:
            runs_cfg = {"queue_poll_s": 1.0, **overrides.pop("runs", {})}
            cfg = base_config(
                graphs=GRAPHS,
                database=db_cfg,
                broker={"kind": "redis", "redis_url": REDIS_URL, "key_prefix": prefix},
                runs=runs_cfg,
                **overrides,
            )
            server = Replica(workdir / f"replica{len(started)}", cfg)
            started.append(server)
            server.start(timeout=300)
            return server

        try:
            yield start
        finally:
            for server in started:
                if server.proc is not None and server.proc.poll() is None:
                    server.resume()  # a paused one must be able to stop
                server.kill()
            asyncio.run(drop_prefix(prefix))


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[Callable[..., Replica]]:
    with cluster(tmp_path) as start:
        yield start


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """A synchronous engine on a fresh PostgreSQL database with the schema (SQL-level tests
    of the run queue)."""
    with database("postgres", tmp_path) as (_, sync_url):
        eng = create_engine(sync_url)
        metadata.create_all(eng)
        try:
            yield eng
        finally:
            eng.dispose()


def new_thread(client: httpx.Client) -> str:
    return client.post(f"{API}/threads", json={}).json()["thread_id"]


def create_run(client: httpx.Client, tid: str, body: dict[str, Any]) -> httpx.Response:
    """A run of the `clustered` graph; its input always sets `gate` and `hold_s` (state
    keys outlive a run on its thread)."""
    body = {**body, "input": {"gate": "", "hold_s": 0, **body.get("input", {})}}
    return client.post(f"{API}/threads/{tid}/runs", json={"assistant_id": "clustered", **body})


def wait_run(
    client: httpx.Client, tid: str, rid: str, wanted: set[str], timeout: float = 120
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        resp = client.get(f"{API}/threads/{tid}/runs/{rid}")
        run = resp.json() if resp.status_code == 200 else {"status": f"http {resp.status_code}"}
        if run["status"] in wanted:
            return run
        assert time.monotonic() < deadline, f"run {rid} stayed {run['status']}"
        time.sleep(0.05)


def records(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def wait_record(
    log: Path,
    match: Callable[[dict[str, Any]], bool],
    timeout: float = 120,
    explain: Callable[[], str] = lambda: "",
) -> dict:
    """The first record of `log` that matches; `explain()` adds to the failure message."""
    deadline = time.monotonic() + timeout
    while True:
        for rec in records(log):
            if match(rec):
                return rec
        assert time.monotonic() < deadline, f"no such record in {records(log)}{explain()}"
        time.sleep(0.05)


def pg_sessions(server: LiveServer) -> str:
    """The sessions on `server`'s database and the row locks they hold or wait for: what a
    recovery that never came was up against."""
    url = make_url(server.config["database"]["url"]).set(drivername="postgresql")
    query = """
        SELECT a.pid, a.application_name, a.state, a.wait_event_type, a.wait_event,
               now() - a.xact_start AS in_xact, left(a.query, 160) AS query,
               (SELECT string_agg(l.mode || CASE WHEN l.granted THEN '' ELSE '(waiting)' END,
                                  ',') FROM pg_locks l
                 WHERE l.pid = a.pid AND l.locktype IN ('tuple', 'transactionid', 'relation')
               ) AS locks
          FROM pg_stat_activity a WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
    """
    try:
        with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as conn:
            rows = conn.execute(query).fetchall()
    except psycopg.Error as exc:
        return f"\n(no session list: {exc})"
    return "\nsessions:\n" + "\n".join(" | ".join(str(v) for v in row) for row in rows)


def full_log(server: LiveServer) -> str:
    path = server.log_path
    return path.read_text(errors="replace") if path is not None and path.exists() else ""


def wait_log(server: LiveServer, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while text not in full_log(server):
        assert time.monotonic() < deadline, f"{text!r} not logged:\n{server.logs()}"
        time.sleep(0.05)
