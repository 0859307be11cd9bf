"""Never lose history: a kill -9 in the middle of a thread copy, a rollback or a prune leaves
the old history or the new one, never a part of it (and never nothing).

A thread gets a long, heavy history (one run of many supersteps, every one checkpointed).
While the server rewrites it, a watcher in the test process reads the database and kills
the server (SIGKILL) at the first sign of the operation on disk: the first committed change
it can see — so an operation that commits in pieces is caught after its first piece — or,
on SQLite, the first page written to the WAL, i.e. inside the transaction or its commit.
After a restart the history must be exactly the old one or exactly the new one.
On SQLite, and on PostgreSQL when PRONGHORN_TEST_POSTGRES_URL is set.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from runs.backends import KINDS, database
from support.live import LiveServer, base_config

pytestmark = pytest.mark.timeout(900)  # several server starts; a loaded machine takes ~25 s each

START_S = 180.0
STEPS, PAYLOAD = 150, 400  # ~150 checkpoints whose state grows to ~60 KB: ~5 MB of history


class Killer(threading.Thread):
    """Kills the server at the first change it sees in `probe()` (polled as fast as the
    database answers), or when told to stop looking."""

    def __init__(self, server: LiveServer, probe: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.server, self.probe = server, probe
        self.baseline = probe()
        self.fired = threading.Event()
        self.stop = threading.Event()
        self.seen: Any = None

    def run(self) -> None:
        deadline = time.monotonic() + 120
        while not self.stop.is_set() and time.monotonic() < deadline:
            now = self.probe()
            if now != self.baseline:
                assert self.server.proc is not None
                self.server.proc.kill()  # SIGKILL, at once
                self.seen = now
                self.fired.set()
                return


class Db:
    """Reads the server's database from the test process (SQLite WAL allows it)."""

    def __init__(self, sync_url: str, wal: Path | None) -> None:
        self.engine = create_engine(sync_url)
        self.wal = wal

    def count(self, sql: str, **params: Any) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(text(sql), params).scalar() or 0)

    def probe(self, sql: str, *, wal: bool = True, **params: Any) -> Callable[[], Any]:
        """The row count of `sql`, and (if `wal`) when the SQLite WAL was last written."""

        def look() -> Any:
            written = None
            if wal and self.wal is not None and self.wal.exists():
                written = self.wal.stat().st_mtime_ns
            return (self.count(sql, **params), written)

        return look


def _kill_during(
    server: LiveServer, probe: Callable[[], Any], what: str, call: Callable[[httpx.Client], Any]
) -> None:
    """Start `call` and kill the server at the first change `probe` sees; then restart it."""
    killer = Killer(server, probe)
    killer.start()
    with httpx.Client(timeout=120) as http, contextlib.suppress(httpx.TransportError):
        call(http)  # the server may die under it
    if not killer.fired.wait(60):
        killer.stop.set()
        pytest.fail(f"the {what} never touched the database")
    _restart(server)


def _history(http: httpx.Client, api: str, tid: str) -> list[tuple[str, Any]]:
    resp = http.post(f"{api}/threads/{tid}/history", json={"limit": 1000})
    assert resp.status_code == 200, resp.text
    return [(s["checkpoint"]["checkpoint_id"], s["values"]) for s in resp.json()]


def _restart(server: LiveServer) -> None:
    if server.proc is not None and server.proc.poll() is None:
        server.kill()
    server.proc = None
    server.start(timeout=START_S)


def _quiet(server: LiveServer, db: Db, tid: str) -> None:
    """Wait until nothing is being written (the WAL stops changing for a moment)."""
    deadline = time.monotonic() + 60
    last, since = None, time.monotonic()
    while time.monotonic() - since < 1.0:
        assert time.monotonic() < deadline
        now = db.probe("SELECT COUNT(*) FROM checkpoints WHERE thread_id = :t", t=tid)()
        if now != last:
            last, since = now, time.monotonic()
        time.sleep(0.05)


@pytest.fixture(params=KINDS)
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[LiveServer, Db]]:
    with database(request.param, tmp_path / "srv") as (db_cfg, sync_url):
        overrides: dict = {
            "graphs": {"chatty": "testgraphs.chatty:graph"},
            "runs": {"recover": "error"},
        }
        if db_cfg:
            overrides["database"] = db_cfg
        server = LiveServer(tmp_path / "srv", base_config(**overrides))
        wal = tmp_path / "srv" / "data" / "pronghorn.db-wal" if request.param == "sqlite" else None
        db = Db(sync_url, wal)
        try:
            yield server.start(timeout=START_S), db
        finally:
            server.stop()
            db.engine.dispose()


def test_kill_9_during_copy_rollback_and_prune_keeps_a_whole_history(
    live: tuple[LiveServer, Db], tmp_path: Path
) -> None:
    server, db = live
    api = server.api
    with httpx.Client(timeout=120) as http:
        tid = http.post(f"{api}/threads", json={}).json()["thread_id"]
        out = http.post(
            f"{api}/threads/{tid}/runs/wait",
            json={
                "assistant_id": "chatty",
                "input": {"steps": STEPS, "payload": PAYLOAD},
                "durability": "sync",
                "config": {"recursion_limit": STEPS + 10},
            },
        )
        assert out.status_code == 200, out.text
        assert len(out.json()["blobs"]) == STEPS
        history = _history(http, api, tid)
        assert len(history) >= STEPS
    _quiet(server, db, tid)

    # -- copy: the new thread is all there or not there at all ---------------------------
    # Twice: killed at the first WAL write (SQLite: inside the transaction or its commit),
    # then at the first committed row (what catches an operation committed in pieces).
    for attempt, wal in enumerate((True, False), start=1):
        _kill_during(
            server,
            db.probe("SELECT COUNT(*) FROM threads", wal=wal),
            "copy",
            lambda http: http.post(f"{api}/threads/{tid}/copy"),
        )
        with httpx.Client(timeout=120) as http:
            assert _history(http, api, tid) == history  # the source is untouched
            threads = http.post(f"{api}/threads/search", json={"limit": 100}).json()
            copies = [t["thread_id"] for t in threads if t["thread_id"] != tid]
            assert len(copies) <= attempt
            for copy in copies:
                assert _history(http, api, copy) == history

    # -- rollback of a run: its checkpoints all go, or all stay --------------------------
    counted = "SELECT COUNT(*) FROM checkpoints WHERE thread_id = :t"
    gate = tmp_path / "never-opened"
    with httpx.Client(timeout=120) as http:
        run = http.post(
            f"{api}/threads/{tid}/runs",
            json={
                "assistant_id": "chatty",
                "input": {"gate": str(gate), "steps": 0},
                "durability": "sync",
            },
        ).json()
        rid = run["run_id"]
        deadline = time.monotonic() + 60
        while http.get(f"{api}/threads/{tid}/runs/{rid}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # the run's input checkpoint is on disk (sync durability), then it waits at the gate
        deadline = time.monotonic() + 60
        while db.count(counted, t=tid) <= len(history):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        _quiet(server, db, tid)
        with_run = _history(http, api, tid)
        assert len(with_run) > len(history) and with_run[-len(history) :] == history
    # (the first committed change: the run's own end writes other rows before the rollback)
    _kill_during(
        server,
        db.probe(counted, wal=False, t=tid),
        "rollback",
        lambda http: http.post(f"{api}/threads/{tid}/runs/{rid}/cancel?action=rollback"),
    )
    with httpx.Client(timeout=120) as http:
        after = _history(http, api, tid)
        assert after in (with_run, history)

    # -- prune to the latest checkpoint: all of the history, or just the latest ----------
    with httpx.Client(timeout=120) as http:
        before = _history(http, api, tid)
    _quiet(server, db, tid)
    _kill_during(
        server,
        db.probe(counted, wal=False, t=tid),
        "prune",
        lambda http: http.post(
            f"{api}/threads/prune", json={"thread_ids": [tid], "strategy": "keep_latest"}
        ),
    )
    with httpx.Client(timeout=120) as http:
        after = _history(http, api, tid)
        assert after in (before, before[:1])
        # and the thread goes on from there
        out = http.post(
            f"{api}/threads/{tid}/runs/wait",
            json={
                "assistant_id": "chatty",
                "input": {"steps": STEPS + 1},
                "config": {"recursion_limit": STEPS + 10},
            },
        )
        assert out.status_code == 200, out.text
        assert len(out.json()["blobs"]) == STEPS + 1
