"""The `scale` compose profile for real: PostgreSQL, Redis, three gateway replicas and nginx
(`lb`) from the offline-built images, started with the command docs/deployment.md gives.
The official SDK streams through `lb`; a `Last-Event-ID` reconnect served by another
replica continues the stream exactly; a replica killed with SIGKILL mid-run is recovered by
another within the lease bound; `down` then `up` keeps threads and files."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from containers.compose import Stack, wait_until
from containers.conftest import TIMEOUT, create_api_key, example_config
from support.sdk import values

REPLICAS = 3
LEASE_S = 4.0
# Detection takes at most about lease_s * 4/3; the claim and a loaded host add to that.
RECOVERY_BOUND_S = 15.0
WORDS = [f"w{i:02d}" for i in range(60)]
ANSWER = " ".join(WORDS)
MODEL = {
    "name": "scripted",
    "provider": "scripted",
    "script": [
        {
            "text": "Writing the note.",
            "tool_calls": [
                {
                    "name": "bash",
                    "args": {
                        "description": "Write a note",
                        "command": "echo kept-note > /mnt/user-data/outputs/note.txt",
                    },
                }
            ],
        },
        # Streamed word by word, 0.25 s apart: about 15 s, time to interfere.
        {"text": ANSWER, "delay_s": 0.25},
    ],
    "options": {"fallback": {"text": "The script is over."}},
}

pytestmark = TIMEOUT


@dataclass
class Scaled:
    stack: Stack
    key: str
    replicas: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.stack.variables['PRONGHORN_SCALE_PORT']}"

    def sdk(self) -> SyncLangGraphClient:
        return get_sync_client(url=f"{self.url}/api/langgraph", api_key=self.key)

    def psql(self, sql: str) -> str:
        (pg,) = self.stack.containers("postgres")
        env = dict(
            line.split("=", 1)
            for line in self.stack.env_file.read_text().splitlines()
            if line.startswith("PRONGHORN_POSTGRES_")
        )
        done = self.stack.exec(
            pg,
            "psql",
            "-U",
            env["PRONGHORN_POSTGRES_USER"],
            "-d",
            env["PRONGHORN_POSTGRES_DB"],
            "-tAc",
            sql,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def run_row(self, run_id: str) -> tuple[str, str]:
        """(status, owner) of a run, from PostgreSQL."""
        status, _, owner = self.psql(
            f"select status || '|' || coalesce(owner, '') from runs where run_id = '{run_id}'"
        ).partition("|")
        return status, owner

    def replica_containers(self) -> dict[str, str]:
        """Replica id -> container (a replica card names its host: the container's
        hostname, i.e. the start of its id)."""
        status = httpx.get(
            f"{self.url}/api/config/status", headers={"x-api-key": self.key}, timeout=30
        ).json()
        containers = self.stack.containers("replica")
        return {
            card["replica_id"]: next(c for c in containers if c.startswith(card["host"]))
            for card in status["replicas"]
        }

    def upstreams_of(self, path_part: str) -> list[str]:
        """The replica addresses `lb` logged for requests whose path contains `path_part`
        (an access log line is written when the request ends)."""
        found: list[str] = []
        for line in self.stack.logs("lb").splitlines():
            if path_part in line:
                match = re.search(r"upstream=(\S+)", line)
                if match:
                    found.append(match.group(1).split(",")[-1].strip())
        return found

    def address_of(self, container: str) -> str:
        nets = self.stack.inspect(container)["NetworkSettings"]["Networks"]
        (ip,) = {n["IPAddress"] for n in nets.values()}
        return f"{ip}:2026"


@pytest.fixture(scope="module")
def scaled(make_stack) -> Iterator[Scaled]:
    config = example_config(
        models=[MODEL],
        agent={"default_model": "scripted"},
        runs={"lease_s": LEASE_S, "recover": "resume", "queue_poll_s": 1.0},
        memory={"enabled": False},
    )
    stack = make_stack(["scale"], config=config)
    # The command docs/deployment.md gives (PRONGHORN_REPLICAS is 3 in docker/.env.example).
    stack.up("--scale", "gateway=0")
    replicas = stack.wait_healthy("replica", count=REPLICAS)
    stack.wait_healthy("lb")
    yield Scaled(stack, create_api_key(stack, replicas[0]), replicas)


@pytest.fixture
def client(scaled: Scaled) -> Iterator[SyncLangGraphClient]:
    with scaled.sdk() as sdk:
        yield sdk


def test_every_service_is_healthy_and_lb_reaches_the_replicas(scaled: Scaled):
    for service in ("postgres", "redis", "replica", "lb"):
        ids = scaled.stack.containers(service)
        assert ids and all(scaled.stack.health(c) == "healthy" for c in ids), service
    assert len(scaled.stack.containers("replica")) == REPLICAS
    assert scaled.stack.containers("gateway") == []
    assert httpx.get(f"{scaled.url}/ready", timeout=10).status_code == 200
    status = httpx.get(
        f"{scaled.url}/api/config/status", headers={"x-api-key": scaled.key}, timeout=30
    ).json()
    assert len(status["replicas"]) == REPLICAS


def test_doctor_is_green_in_a_replica(scaled: Scaled):
    done = scaled.stack.exec(scaled.replicas[0], "pronghorn", "doctor", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["broker"]["ok"] and checks["database"]["ok"], checks


def _tokens(parts: Iterator[Any], seen: list[tuple[int, str]], limit: int) -> bool:
    """Read the answer's word tokens into `seen` (event id, word); True when the stream
    ended, False after `limit` new ones."""
    got = 0
    for part in parts:
        if part.event != "messages" or not isinstance(part.data, list) or not part.data:
            continue
        chunk = part.data[0]
        text = chunk.get("content")
        word = text.strip() if isinstance(text, str) else ""
        if chunk.get("type") == "AIMessageChunk" and word in WORDS:
            assert part.id is not None
            seen.append((int(part.id), word))
            got += 1
            if got >= limit:
                return False
    return True


def _start(client: SyncLangGraphClient) -> tuple[str, str]:
    tid = client.threads.create()["thread_id"]
    run = client.runs.create(
        tid,
        "lead_agent",
        input={"messages": [{"role": "user", "content": "go"}]},
        stream_mode=["messages-tuple"],
    )
    return tid, run["run_id"]


def test_a_last_event_id_reconnect_on_another_replica_continues_the_stream(
    scaled: Scaled, client: SyncLangGraphClient
):
    tid, rid = _start(client)
    seen: list[tuple[int, str]] = []
    path = f"/runs/{rid}/stream"

    def read(limit: int) -> bool:
        """One connection through lb, from the last event seen; which replica served it."""
        before = len(scaled.upstreams_of(path))
        last = str(seen[-1][0]) if seen else "-1"
        parts = client.runs.join_stream(
            tid, rid, stream_mode=["messages-tuple"], last_event_id=last
        )
        ended = _tokens(parts, seen, limit)
        assert isinstance(parts, Generator)  # the SDK's stream is a generator: close it
        parts.close()
        wait_until("lb to log the request", lambda: len(scaled.upstreams_of(path)) > before, 30)
        return ended

    assert not read(5)
    first = scaled.upstreams_of(path)[0]
    # Reconnect with Last-Event-ID until lb sends one to another replica (round-robin), and
    # read the rest of the stream there.
    for _ in range(6):
        if read(2) or scaled.upstreams_of(path)[-1] != first:
            break
    assert scaled.upstreams_of(path)[-1] != first, scaled.upstreams_of(path)
    assert read(len(WORDS) + 1)
    assert len(set(scaled.upstreams_of(path))) >= 2
    ids = [i for i, _ in seen]
    assert ids == sorted(set(ids)), "an event came twice or out of order"
    assert [w for _, w in seen] == WORDS, "the resumed stream skipped or repeated words"
    assert client.runs.get(tid, rid)["status"] == "success"


def test_a_replica_killed_mid_run_is_recovered_by_another_within_the_lease_bound(
    scaled: Scaled, client: SyncLangGraphClient
):
    containers = scaled.replica_containers()
    assert len(containers) == REPLICAS
    tid, rid = _start(client)
    seen: list[tuple[int, str]] = []
    stream = client.runs.join_stream(tid, rid, stream_mode=["messages-tuple"])
    assert not _tokens(stream, seen, 3)  # the answer is streaming live: mid-run
    assert isinstance(stream, Generator)
    stream.close()
    status, owner = scaled.run_row(rid)
    assert status == "running" and owner
    scaled.stack.docker("kill", "--signal", "KILL", containers[owner])
    killed = time.monotonic()
    # Killed mid-run: the run had not finished (about 15 s of answer, a few read).
    assert scaled.run_row(rid)[0] == "running"

    def taken_over() -> bool:
        now_status, now_owner = scaled.run_row(rid)
        return now_owner not in ("", owner) or now_status in ("success", "error")

    wait_until("another replica to take the run over", taken_over, RECOVERY_BOUND_S * 2, 0.2)
    recovered_s = time.monotonic() - killed
    assert recovered_s < RECOVERY_BOUND_S, f"recovered after {recovered_s:.1f} s"
    final = client.runs.join(tid, rid)
    assert client.runs.get(tid, rid)["status"] == "success"
    assert final["messages"][-1]["content"] == ANSWER
    _, new_owner = scaled.run_row(rid)
    assert new_owner != owner
    print(f"\nrecovered {recovered_s:.1f} s after SIGKILL (lease {LEASE_S} s)")
    # The killed replica comes back (restart: unless-stopped) or is replaced; wait for the
    # profile to be whole again for the tests after this one.
    scaled.stack.up("--scale", "gateway=0")
    scaled.stack.wait_healthy("replica", count=REPLICAS)


def test_down_then_up_keeps_threads_and_files(scaled: Scaled, client: SyncLangGraphClient):
    tid = client.threads.create(metadata={"kept": "yes"})["thread_id"]
    run = client.runs.wait(
        tid, "lead_agent", input={"messages": [{"role": "user", "content": "go"}]}
    )
    assert isinstance(run, dict)
    note = f"{scaled.url}/api/threads/{tid}/artifacts/outputs/note.txt"
    headers = {"x-api-key": scaled.key}
    assert httpx.get(note, headers=headers, timeout=30).text == "kept-note\n"
    scaled.stack.down()
    assert scaled.stack.containers("replica") == []
    scaled.stack.up("--scale", "gateway=0")
    scaled.stack.wait_healthy("replica", count=REPLICAS)
    scaled.stack.wait_healthy("lb")
    with scaled.sdk() as again:
        thread = again.threads.get(tid)
        state = again.threads.get_state(tid)
    assert thread["metadata"] is not None and thread["metadata"]["kept"] == "yes"
    assert values(state)["messages"][-1]["content"] == ANSWER
    assert httpx.get(note, headers=headers, timeout=30).text == "kept-note\n"
