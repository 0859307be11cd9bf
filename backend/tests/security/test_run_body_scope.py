"""A run body cannot address another thread or user: not through ``checkpoint`` (only
``checkpoint_id``, ``checkpoint_ns`` and ``checkpoint_map`` are taken from it), nor through
``config.configurable``. The agent's file tools, checkpoints and queue stay the run's own.

The attack runs for real: the lead agent, driven by a scripted model, reads thread B's upload
and writes an output while the body of a run on thread A names B (and another user).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import values

SECRET = "B's private upload 7f3a"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


RULES = [
    {
        "match": "steal",
        "steps": [
            _call("read_file", description="read", path="/mnt/user-data/uploads/secret.txt"),
            _call(
                "write_file",
                description="plant",
                path="/mnt/user-data/outputs/planted.txt",
                content="planted",
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
        sandbox={"isolation": "none"},
    )
    server = InProcessServer(tmp_path_factory.mktemp("scope"), cfg).start()
    yield server
    server.stop()


def _threads_dir(srv: InProcessServer, user: str = "local") -> Path:
    return srv.workdir / "data" / "users" / user / "threads"


BODIES = [
    pytest.param({"checkpoint": {"thread_id": "{B}"}}, id="checkpoint.thread_id"),
    pytest.param(
        {"checkpoint": {"thread_id": "{B}", "user_id": "mallory", "checkpoint_ns": ""}},
        id="checkpoint.thread_id+user_id",
    ),
    pytest.param(
        {"config": {"configurable": {"thread_id": "{B}", "user_id": "mallory"}}},
        id="config.configurable",
    ),
    pytest.param(
        {"config": {"configurable": {"__pregel_checkpointer": None, "thread_id": "{B}"}}},
        id="config.configurable.internal",
    ),
]


def _fill(value: Any, b: str) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, b) for k, v in value.items()}
    return b if value == "{B}" else value


@pytest.mark.parametrize("extra", BODIES)
async def test_run_body_cannot_reach_another_thread(srv: InProcessServer, extra: dict[str, Any]):
    client = srv.sdk(timeout=30)
    a = (await client.threads.create())["thread_id"]
    b = (await client.threads.create())["thread_id"]
    async with srv.ahttp(base_url=srv.url, timeout=30) as http:
        up = await http.post(
            f"/api/threads/{b}/uploads", files={"files": ("secret.txt", SECRET.encode())}
        )
        assert up.status_code == 200, up.text
        body = {
            "assistant_id": "lead_agent",
            "input": {"messages": [{"role": "user", "content": "steal it"}]},
            **_fill(extra, b),
        }
        r = await http.post(f"/api/langgraph/threads/{a}/runs/wait", json=body)
    assert r.status_code == 200, r.text
    messages = r.json()["messages"]
    read = next(m for m in messages if m["type"] == "tool" and m["name"] == "read_file")
    assert SECRET not in str(read["content"])
    assert read["status"] == "error"

    # the output landed in A, not in B, and no other user's folder was made
    assert (_threads_dir(srv) / a / "outputs" / "planted.txt").read_text() == "planted"
    assert not (_threads_dir(srv) / b / "outputs" / "planted.txt").exists()
    assert not (srv.workdir / "data" / "users" / "mallory").exists()

    # B's history is untouched, A has the run's checkpoints
    assert await client.threads.get_history(b) == []
    assert len(await client.threads.get_history(a)) >= 1
    assert (await client.threads.get(b))["status"] == "idle"
    assert values(await client.threads.get_state(a))["messages"][-1]["content"] == "done"


async def test_checkpoint_id_from_the_body_still_forks(srv: InProcessServer):
    """The allowed keys keep working: a run from an earlier checkpoint of its own thread
    (the body's ``thread_id`` is ignored, its ``checkpoint_id`` and ``checkpoint_ns`` kept)."""
    client = srv.sdk(timeout=30)
    a = (await client.threads.create())["thread_id"]

    async def say(text: str, **kw: Any) -> None:
        await client.runs.wait(
            a, "lead_agent", input={"messages": [{"role": "user", "content": text}]}, **kw
        )

    await say("hello")
    after_hello = (await client.threads.get_state(a))["checkpoint"]
    await say("again")
    fork = {k: after_hello[k] for k in ("checkpoint_id", "checkpoint_ns")}
    await say("third", checkpoint={"thread_id": str(uuid.uuid4()), **fork})
    state = await client.threads.get_state(a)
    texts = [m["content"] for m in values(state)["messages"] if m["type"] == "human"]
    assert texts == ["hello", "third"]  # forked from after the first turn
