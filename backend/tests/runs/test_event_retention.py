"""Never lose events: memory retention bounds what is cached, never what is kept.

A run emits far more than `streaming.run_retention_bytes` (2 KB here); a reader resuming
with any Last-Event-ID — mid-run, after the end, after a restart, after a kill -9 — gets
exactly the events after it, in order, with no gap and no duplicate, and the `run_events`
table holds every one of them. On SQLite, and on PostgreSQL when
PRONGHORN_TEST_POSTGRES_URL is set.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text

from pronghorn.persistence.db import Database, default_sqlite_url
from pronghorn.persistence.migrate import upgrade
from pronghorn.runtime.events.broker import Event
from pronghorn.runtime.events.event_store import SqlEventStore
from pronghorn.runtime.events.memory_broker import MemoryBroker
from runs.backends import KINDS, database
from runs.runkit import Frame, parse_frames, read_events
from support import run_rows
from support.live import LiveServer, base_config

N1, N2, SIZE = 300, 200, 40  # ~60 bytes an event: ~30 KB per run against a 2 KB cache
pytestmark = pytest.mark.timeout(600)  # server starts: ~25 s each on a loaded machine

START_S = 180.0
RETENTION = {"run_retention_bytes": 2048, "total_retention_bytes": 8192}

Frames = list[tuple[int, str, str]]


def _triple(f: Frame) -> tuple[int, str, str]:
    return int(f.id or 0), f.event or "", f.data or ""


def _frames(http: httpx.Client, url: str, last_id: str | None, limit: int | None = None) -> Frames:
    headers = {"Last-Event-ID": last_id} if last_id is not None else {}
    resp, frames = read_events(http, "GET", url, headers=headers, limit=limit)
    assert resp.status_code == 200
    return [_triple(f) for f in frames]


def _wait(what: str, cond: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _stored(sync_url: str, run_id: str) -> Frames:
    engine = create_engine(sync_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT seq, event, data FROM run_events WHERE run_id = :r ORDER BY seq"),
                {"r": run_id},
            ).all()
    finally:
        engine.dispose()
    return [(int(r[0]), r[1], bytes(r[2]).decode()) for r in rows]


class Follower(threading.Thread):
    """Reads a stream to its end in the background (a client that stays connected)."""

    def __init__(self, url: str, last_id: str) -> None:
        super().__init__(daemon=True)
        self.url, self.last_id = url, last_id
        self.frames: Frames = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx.Client(timeout=120) as http:
                headers = {"Last-Event-ID": self.last_id}
                with http.stream("GET", self.url, headers=headers) as resp:
                    buf = b""
                    for chunk in resp.iter_raw():
                        buf += chunk
                        while b"\r\n\r\n" in buf:
                            block, buf = buf.split(b"\r\n\r\n", 1)
                            for f in parse_frames(block + b"\r\n\r\n"):
                                if isinstance(f, Frame):
                                    self.frames.append(_triple(f))
        except BaseException as exc:  # reported by the test
            self.error = exc


@pytest.fixture(scope="module", params=KINDS)
def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, str]]:
    """A live server on SQLite or PostgreSQL (a generous start timeout: a loaded machine
    takes tens of seconds to import the app). One per database for the module: each test
    has its own thread and run, and restarts the server itself (what it is about); it
    leaves it running for the next."""
    workdir = tmp_path_factory.mktemp("srv")
    with database(request.param, workdir) as (db_cfg, sync_url):
        overrides: dict = {
            "graphs": {"chatty": "testgraphs.chatty:graph"},
            "streaming": RETENTION,
            "runs": {"recover": "resume"},
        }
        if db_cfg:
            overrides["database"] = db_cfg
        server = LiveServer(workdir, base_config(**overrides))
        try:
            yield server.start(timeout=START_S), sync_url
        finally:
            server.stop()  # before the database goes


def _gated_run(http: httpx.Client, server: LiveServer, gate: Path) -> tuple[str, str, str]:
    tid = http.post(f"{server.api}/threads", json={}).json()["thread_id"]
    run = http.post(
        f"{server.api}/threads/{tid}/runs",
        json={
            "assistant_id": "chatty",
            "input": {"events": N1, "size": SIZE, "gate": str(gate), "after_gate": N2},
            "stream_mode": ["custom", "updates"],
        },
    )
    assert run.status_code == 200, run.text
    rid = run.json()["run_id"]
    return tid, rid, f"{server.api}/threads/{tid}/runs/{rid}/stream"


def _custom_indexes(frames: Frames) -> list[int]:
    import json

    return [json.loads(d)["i"] for _, e, d in frames if e == "custom"]


def test_reconnect_with_any_last_event_id_gets_exactly_the_rest(
    live: tuple[LiveServer, str], tmp_path: Path
) -> None:
    server, sync_url = live
    gate = tmp_path / "gate"
    with httpx.Client(timeout=60) as http:
        tid, rid, url = _gated_run(http, server, gate)
        # Mid-run (the gate holds it), from the start: the cache has ~2 KB of ~18 KB, the
        # rest comes from the store.
        early = _frames(http, url, "-1", limit=1 + N1)
        assert [f[0] for f in early] == list(range(1, N1 + 2))
        assert early[0][1] == "metadata"
        assert _custom_indexes(early) == list(range(N1))
        assert http.get(f"{server.api}/threads/{tid}/runs/{rid}").json()["status"] == "running"
        # Stored as the run goes, not when it ends.
        _wait("the events so far to be stored", lambda: len(_stored(sync_url, rid)) == N1 + 1)
        # A reader that reconnects from early in the run and stays for the rest, live.
        follower = Follower(url, "5")
        follower.start()
        _wait("the follower to catch up", lambda: len(follower.frames) >= N1 + 1 - 5)
        gate.touch()
        follower.join(120)
        assert not follower.is_alive() and follower.error is None
        http.get(f"{server.api}/threads/{tid}/runs/{rid}/join").raise_for_status()

        full = _frames(http, url, "-1")
        ids = [f[0] for f in full]
        assert ids == list(range(1, len(full) + 1))
        assert _custom_indexes(full) == list(range(N1 + N2))
        assert full[: N1 + 1] == early
        assert follower.frames == full[5:]
        for after in (1, 5, N1, len(full) - 1, len(full)):
            assert _frames(http, url, str(after)) == full[after:]
        assert _frames(http, url, None) == []  # a finished run, no Last-Event-ID: nothing
        assert _stored(sync_url, rid) == full  # the table holds every event

    server.stop()
    server.start(timeout=START_S)
    with httpx.Client(timeout=60) as http:
        assert _frames(http, url, "-1") == full
        assert _frames(http, url, "5") == full[5:]
        assert _frames(http, url, str(N1)) == full[N1:]


def test_events_survive_kill_9_and_the_resumed_run_continues_their_ids(
    live: tuple[LiveServer, str], tmp_path: Path
) -> None:
    server, sync_url = live
    gate = tmp_path / "gate"
    with httpx.Client(timeout=60) as http:
        tid, rid, url = _gated_run(http, server, gate)
        early = _frames(http, url, "-1", limit=1 + N1)
        _wait("the events so far to be stored", lambda: len(_stored(sync_url, rid)) == N1 + 1)
    server.kill()  # SIGKILL mid-run: no shutdown hook stores anything
    gate.touch()
    server.start(timeout=START_S)  # runs.recover: resume runs it again
    with httpx.Client(timeout=60) as http:
        http.get(f"{server.api}/threads/{tid}/runs/{rid}/join").raise_for_status()
        assert http.get(f"{server.api}/threads/{tid}/runs/{rid}").json()["status"] == "success"
        full = _frames(http, url, "-1")
    assert [f[0] for f in full] == list(range(1, len(full) + 1))  # no reuse, no gap
    assert full[: N1 + 1] == early  # the first attempt's events are kept as they were
    again = full[N1 + 1]
    assert again[1] == "metadata" and '"attempt":2' in again[2]
    assert _custom_indexes(full[N1 + 1 :]) == list(range(N1 + N2))
    assert _stored(sync_url, rid) == full


# -- the broker over a real SQLite store, in-process ------------------------------------


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    async with run_rows.sqlite_db(tmp_path) as db:
        yield db


async def _new_run(db: Database) -> str:
    return (await run_rows.new_run(db))[1]


async def _read(broker: MemoryBroker, run_id: str, after: int | None) -> list[Event]:
    return [ev async for ev in broker.subscribe(run_id, after)]


async def test_the_cache_drops_only_stored_events(sqlite_db: Database) -> None:
    store = SqlEventStore(sqlite_db)
    broker = MemoryBroker(
        store=store, run_retention_bytes=1024, total_retention_bytes=4096, flush_interval_s=3600
    )
    rid = await _new_run(sqlite_db)
    await broker.open_run(rid, "t")
    for i in range(100):
        await broker.publish(rid, "custom", b'{"i":%d,"pad":"%s"}' % (i, b"x" * 30))
    # Nothing is stored yet (no flush): all 100 stay cached, over the 1 KB budget.
    assert await store.read(rid, 0, 1000) == []
    cached = broker._runs[rid]
    assert len(cached.events) == 100
    early = broker.subscribe(rid, 3)  # attached before the trim, reads through it
    first = await anext(early)
    assert first.id == 4
    await broker.flush(rid)
    assert len(await store.read(rid, 0, 1000)) == 100
    assert cached.nbytes <= 1024 and cached.first_id > 50  # now trimmed
    # Readers from any id: the store up to the cache, then the cache, then live.
    for after in (0, 3, 50, 99, 100):
        reader = broker.subscribe(rid, after)
        got = []
        for _ in range(100 - after):
            got.append((await anext(reader)).id)
        assert got == list(range(after + 1, 101))
        assert isinstance(reader, AsyncGenerator)  # the brokers' readers are generators
        await reader.aclose()
    late = broker.subscribe(rid, 90)
    for i in range(100, 110):
        await broker.publish(rid, "custom", b'{"i":%d}' % i)
    await broker.close_run(rid)
    assert [ev.id for ev in [first] + [e async for e in early]] == list(range(4, 111))
    assert [ev.id for ev in [e async for e in late]] == list(range(91, 111))
    # Closed: gone from memory, read back from the store, exactly.
    assert rid not in broker._runs
    assert [e.id for e in await _read(broker, rid, 7)] == list(range(8, 111))
    assert await _read(broker, rid, None) == []
    await broker.aclose()


async def test_a_failing_store_loses_nothing(tmp_path: Path) -> None:
    """Another process holds the database's write lock: the events stay cached (and
    readable) until the writer gets through, then are stored and leave memory."""
    db = Database(default_sqlite_url(tmp_path), busy_timeout_ms=20)
    await db.connect()
    await upgrade(db)
    broker = MemoryBroker(
        store=SqlEventStore(db), run_retention_bytes=1024, total_retention_bytes=4096
    )
    rid = await _new_run(db)
    await broker.open_run(rid, "t")
    blocker = sqlite3.connect(tmp_path / "pronghorn.db", isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")  # the write lock, until released below
        for i in range(100):
            await broker.publish(rid, "custom", b'{"i":%d,"pad":"%s"}' % (i, b"x" * 30))
        await broker.close_run(rid)  # cannot store them: logs it, keeps the log
        assert [e.id for e in await _read(broker, rid, 0)] == list(range(1, 101))
        assert [e.id for e in await _read(broker, rid, 42)] == list(range(43, 101))
    finally:
        blocker.rollback()
        blocker.close()
    deadline = time.monotonic() + 60
    while rid in broker._runs:  # the writer retries on its own
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    assert [e.id for e in await SqlEventStore(db).read(rid, 0, 1000)] == list(range(1, 101))
    assert [e.id for e in await _read(broker, rid, 42)] == list(range(43, 101))
    await broker.aclose()
    await db.close()
