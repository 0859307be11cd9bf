"""Cancelling a run really stops its tools: a command the agent started is killed with its
whole process group at once, and nothing it would have done afterwards happens."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.inproc import InProcessServer
from support.live import base_config

from .conftest import assert_responsive

TAG = f"pronghorn-cancel-{uuid.uuid4().hex[:8]}"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


RULES = [
    {
        "match": "long job",
        "steps": [
            _call(
                "bash",
                description="long job",
                # a child and a grandchild, both tagged, then a file written at the end
                command=(
                    f"(sh -c 'sleep 120; echo {TAG}' &) ; sh -c 'sleep 120; echo {TAG}' ; "
                    "touch /mnt/user-data/outputs/finished"
                ),
            ),
            {"text": "done"},
        ],
    }
]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    cfg = base_config(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
    )
    server = InProcessServer(tmp_path_factory.mktemp("cancel"), cfg).start()
    yield server
    server.stop()


def _tagged_pids() -> list[int]:
    """Processes whose command line carries this test's tag."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if TAG.encode() in cmdline:
            pids.append(int(entry.name))
    return pids


async def _until(predicate: Any, within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_cancel_kills_the_running_command_and_its_children(srv: InProcessServer):
    client = srv.sdk(timeout=30)
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(
        tid, "lead_agent", input={"messages": [{"role": "user", "content": "long job"}]}
    )
    with assert_responsive(srv):
        await _until(lambda: len(_tagged_pids()) >= 2, 60, "the command to start")
        started = time.monotonic()
        await client.runs.cancel(tid, run["run_id"], wait=True)
        await _until(lambda: not _tagged_pids(), 10, "the command's processes to die")
        stopped_in = time.monotonic() - started
    assert stopped_in < 10
    final = await client.runs.get(tid, run["run_id"])
    assert final["status"] == "interrupted"
    outputs = srv.workdir / "data" / "users" / "local" / "threads" / tid / "outputs"
    assert not (outputs / "finished").exists()
