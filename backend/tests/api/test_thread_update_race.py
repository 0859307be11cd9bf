"""A state update and a run started at the same time never interleave.

The update either answers 409 (a run of the thread is in flight) or applies to an idle
thread, and then a run created meanwhile starts after it, from the updated state. The
evidence is the thread's history: one straight line of checkpoints (each one's parent is
the one before it), each run's checkpoints contiguous, and every accepted update's message
still in the final state (an update written while a run was executing would be forked
away by the run's next checkpoint).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError
from langgraph_sdk.schema import Run

from support.sdk import values

ROUNDS = 60


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}]}


async def _update_after(client: LangGraphClient, tid: str, delay: float, text: str) -> bool:
    await asyncio.sleep(delay)
    try:
        await client.threads.update_state(tid, human(text))
    except ConflictError:
        return False
    return True


async def _run_after(client: LangGraphClient, tid: str, delay: float, text: str) -> Run:
    await asyncio.sleep(delay)
    return await client.runs.create(tid, "echo", input={**human(text), "sleep": 0.05})


def _assert_linear(history: Sequence[Mapping[str, Any]]) -> None:
    """Newest first, as the API answers: each checkpoint's parent is the next one."""
    for newer, older in itertools.pairwise(history):
        assert newer["parent_checkpoint"]["checkpoint_id"] == older["checkpoint_id"], (
            f"history forks at {newer['checkpoint_id']} ({newer['metadata']})"
        )
    assert history[-1]["parent_checkpoint"] is None


def _assert_runs_contiguous(history: Sequence[Mapping[str, Any]]) -> None:
    seen: list[str] = []
    for state in reversed(history):
        run_id = (state["metadata"] or {}).get("run_id")
        source = (state["metadata"] or {}).get("source")
        key = (
            f"run:{run_id}" if run_id and source != "update" else f"other:{state['checkpoint_id']}"
        )
        if key in seen and seen[-1] != key:
            raise AssertionError(f"{key} is split by another write: {seen}")
        if not seen or seen[-1] != key:
            seen.append(key)


async def test_update_and_run_started_together_never_interleave(client: LangGraphClient) -> None:
    tid = (await client.threads.create(graph_id="echo"))["thread_id"]
    first = await client.runs.create(tid, "echo", input=human("start"))
    await client.runs.join(tid, first["run_id"])

    applied: list[str] = []
    refused = 0
    for i in range(ROUNDS):
        # Either side first, by 0 to 14 ms: before, during and after the run's acceptance.
        lead = (i // 2 % 8) * 0.002
        run_delay, update_delay = (lead, 0.0) if i % 2 else (0.0, lead)
        run, ok = await asyncio.gather(
            _run_after(client, tid, run_delay, f"run {i}"),
            _update_after(client, tid, update_delay, f"update {i}"),
        )
        if ok:
            applied.append(f"update {i}")
        else:
            refused += 1
        await client.runs.join(tid, run["run_id"])
        status = (await client.runs.get(tid, run["run_id"]))["status"]
        assert status == "success", status

    state = await client.threads.get_state(tid)
    contents = [m["content"] for m in values(state)["messages"]]
    for text in applied:
        assert text in contents, f"{text!r} was accepted (200) but lost: {contents}"
    for i in range(ROUNDS):
        assert f"run {i}" in contents
    history = await client.threads.get_history(tid, limit=1000)
    _assert_linear(history)
    _assert_runs_contiguous(history)
    # The race was exercised both ways: some updates won the thread, some were refused.
    assert applied and refused, (len(applied), refused)


async def test_update_while_a_run_executes_is_refused(client: LangGraphClient) -> None:
    tid = (await client.threads.create(graph_id="echo"))["thread_id"]
    run = await client.runs.create(tid, "echo", input={**human("slow"), "sleep": 30})
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while (await client.runs.get(tid, run["run_id"]))["status"] != "running":
            assert asyncio.get_running_loop().time() < deadline, "the run never started"
            await asyncio.sleep(0.02)
        try:
            await client.threads.update_state(tid, human("sneaky"))
        except ConflictError as exc:
            assert "busy" in str(exc)
        else:
            raise AssertionError("an update was applied while a run was executing")
    finally:
        await client.runs.cancel(tid, run["run_id"], wait=True)
