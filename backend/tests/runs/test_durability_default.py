"""A run that names no ``durability`` uses LangGraph's default, ``async``: a checkpoint after
every step, so history, forks ("regenerate") and a page reloaded mid-run see what they see
against the reference server. ``exit`` and ``sync`` stay available per run and per config.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from langgraph_sdk.schema import ThreadState

from runs.runkit import human
from support.inproc import InProcessServer
from support.sdk import as_state, values, wire


def _steps(history: Sequence[ThreadState]) -> list[int]:
    return [(h["metadata"] or {})["step"] for h in history]


async def test_default_history_has_a_checkpoint_per_step(server: InProcessServer):
    """echo is prepare → respond: input (-1), start (0), prepare (1), respond (2)."""
    client = server.sdk(timeout=30)
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "echo", input=human("one"))
    history = await client.threads.get_history(tid)
    assert _steps(history) == [2, 1, 0, -1]
    assert [h["next"] for h in history] == [[], ["respond"], ["prepare"], ["__start__"]]
    run = (await client.runs.list(tid))[0]
    assert wire(run)["kwargs"]["durability"] is None  # not named: the default applied


async def test_exit_is_an_opt_in_with_less_history(server: InProcessServer):
    client = server.sdk(timeout=30)
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "echo", input=human("one"), durability="exit")
    history = await client.threads.get_history(tid)
    assert len(history) < 4
    assert values(history[0])["last_echo"] == "one"


async def test_config_key_changes_the_default(start_app):
    srv = start_app(runs={"durability": "exit"})
    client = srv.sdk(timeout=30)
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "echo", input=human("one"))
    assert len(await client.threads.get_history(tid)) < 4
    await client.runs.wait(tid, "echo", input=human("two"), durability="sync")
    steps = _steps(await client.threads.get_history(tid, limit=20))
    assert len(steps) >= 5  # the sync run wrote each of its steps


async def test_regenerate_keeps_the_users_last_message(server: InProcessServer):
    """A chat client's "Regenerate" forks from the checkpoint before the last answer (the
    parent of the latest state) — with per-step checkpoints that state still holds the
    user's last message, so nothing the user wrote is lost."""
    client = server.sdk(timeout=30)
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "echo", input=human("first"))
    await client.runs.wait(tid, "echo", input=human("second"))
    state = await client.threads.get_state(tid)
    parent = state["parent_checkpoint"]
    assert parent is not None
    await client.runs.wait(tid, "echo", input=None, checkpoint=parent)
    after = await client.threads.get_state(tid)
    texts = [(m["type"], m["content"]) for m in values(after)["messages"]]
    assert texts == [
        ("human", "first"),
        ("ai", "echo: first"),
        ("human", "second"),
        ("ai", "echo: second"),
    ]


async def test_reload_mid_run_sees_the_turn_in_progress(server: InProcessServer):
    """While a run is still in its second node, the thread's state already has the new
    user message (a page reloaded mid-run shows the turn in progress)."""
    client = server.sdk(timeout=30)
    tid = (await client.threads.create())["thread_id"]
    # It sleeps far longer than the test takes and is cancelled once seen mid-run.
    run = await client.runs.create(tid, "echo", input={**human("in progress"), "sleep": 600})
    deadline = time.monotonic() + 30
    texts: list[str] = []
    while time.monotonic() < deadline:
        state = (await client.threads.get_state(tid))["values"] or {}
        texts = [m["content"] for m in as_state(state).get("messages", [])]
        if texts:
            break
        await asyncio.sleep(0.05)
    assert texts == ["in progress"]
    assert (await client.runs.get(tid, run["run_id"]))["status"] in ("pending", "running")
    await client.runs.cancel(tid, run["run_id"], wait=True)
