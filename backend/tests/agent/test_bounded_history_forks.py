"""Edit, regenerate and branches from a bounded history, done the way third-party chat
clients (LangGraph's ``useStream``, agent-chat-ui) do it with the official SDK: load
``threads.get_history(limit=10)``, find the state a message was *first seen* in (the
oldest of the 10 entries that holds its id), and start a run from that state's
``parent_checkpoint`` — with the edited message as input (edit) or no input (regenerate).
That only lands in the right place when a turn writes few checkpoints."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from support.inproc import InProcessServer
from support.live import base_config

LIMIT = 10  # what the popular chat clients ask for


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    cfg = base_config(sandbox={"isolation": "none"})
    server = InProcessServer(tmp_path_factory.mktemp("forks"), cfg).start(timeout=120)
    yield server
    server.stop()


def _human(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}]}


def _ids(state: dict[str, Any]) -> list[str]:
    return [m["id"] for m in (state.get("values") or {}).get("messages") or []]


def first_seen(history: list[dict[str, Any]], message_id: str) -> dict[str, Any]:
    """useStream's ``firstSeenState``: the oldest loaded state holding the message."""
    holding = [h for h in history if message_id in _ids(h)]
    assert holding, f"message {message_id} is in none of the {len(history)} entries"
    return holding[-1]  # history is newest first


def assert_paired(messages: list[dict[str, Any]]) -> None:
    """Every AI tool call is directly answered by its tool result."""
    for i, m in enumerate(messages):
        if m["type"] == "ai" and m.get("tool_calls"):
            calls = [c["id"] for c in m["tool_calls"]]
            after = messages[i + 1 : i + 1 + len(calls)]
            assert [r.get("tool_call_id") for r in after if r["type"] == "tool"] == calls, (
                f"tool call without its result: {m['tool_calls']}"
            )


async def _two_turns(client: Any) -> tuple[str, list[dict[str, Any]]]:
    """A thread with a plain turn, then a turn with one tool round (write_todos)."""
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "lead_agent", input=_human("hi"))
    out = await client.runs.wait(tid, "lead_agent", input=_human("make a plan for a trip"))
    assert [m["type"] for m in out["messages"]] == ["human", "ai", "human", "ai", "tool", "ai"]
    return tid, out["messages"]


async def test_edit_the_last_human_message(srv: InProcessServer):
    client: Any = srv.sdk()  # JSON shapes: compared as plain dicts
    tid, messages = await _two_turns(client)
    history = await client.threads.get_history(tid, limit=LIMIT)
    seen = first_seen(history, messages[2]["id"])
    parent = seen["parent_checkpoint"]
    # the parent is the state before the edited message: it has the first turn only
    by_id = {h["checkpoint_id"]: h for h in history}
    assert parent["checkpoint_id"] in by_id, "the fork point is not among the 10 entries"
    assert _ids(by_id[parent["checkpoint_id"]]) == [m["id"] for m in messages[:2]]

    out = await client.runs.wait(tid, "lead_agent", input=_human("hello again"), checkpoint=parent)
    got = out["messages"]
    assert [m["type"] for m in got] == ["human", "ai", "human", "ai"]
    assert [m["id"] for m in got[:2]] == [m["id"] for m in messages[:2]]
    assert got[2]["content"] == "hello again"
    assert_paired(got)
    state = await client.threads.get_state(tid)
    assert _ids(state) == [m["id"] for m in got]

    # a branch switcher: the fork point and both of its children are in the 10 entries
    history = await client.threads.get_history(tid, limit=LIMIT)
    children = [
        h
        for h in history
        if (h.get("parent_checkpoint") or {}).get("checkpoint_id") == parent["checkpoint_id"]
    ]
    assert len(children) == 2
    assert parent["checkpoint_id"] in {h["checkpoint_id"] for h in history}


async def test_edit_the_previous_human_message(srv: InProcessServer):
    client: Any = srv.sdk()  # JSON shapes: compared as plain dicts
    tid, messages = await _two_turns(client)
    history = await client.threads.get_history(tid, limit=LIMIT)
    parent = first_seen(history, messages[0]["id"])["parent_checkpoint"]
    out = await client.runs.wait(
        tid, "lead_agent", input=_human("make a plan for a picnic"), checkpoint=parent
    )
    got = out["messages"]
    assert [m["type"] for m in got] == ["human", "ai", "tool", "ai"]
    assert got[0]["content"] == "make a plan for a picnic"
    assert not {m["id"] for m in got} & {m["id"] for m in messages}
    assert_paired(got)


async def test_regenerate_the_last_answer(srv: InProcessServer):
    client: Any = srv.sdk()  # JSON shapes: compared as plain dicts
    tid, messages = await _two_turns(client)
    history = await client.threads.get_history(tid, limit=LIMIT)
    parent = first_seen(history, messages[-1]["id"])["parent_checkpoint"]
    out = await client.runs.wait(tid, "lead_agent", input=None, checkpoint=parent)
    got = out["messages"]
    assert [m["type"] for m in got] == ["human", "ai", "human", "ai", "tool", "ai"]
    assert [m["id"] for m in got[:5]] == [m["id"] for m in messages[:5]]
    assert got[-1]["id"] != messages[-1]["id"]  # a new answer...
    assert got[-1]["content"] == messages[-1]["content"]  # ...from the same (scripted) model
    assert_paired(got)


async def test_regenerate_the_first_answer_of_a_long_thread(srv: InProcessServer):
    """Regenerate an answer that is not the last: from its parent, the tool turn after it
    is gone and no tool call is left without a result."""
    client: Any = srv.sdk()  # JSON shapes: compared as plain dicts
    tid, messages = await _two_turns(client)
    history = await client.threads.get_history(tid, limit=LIMIT)
    parent = first_seen(history, messages[1]["id"])["parent_checkpoint"]
    out = await client.runs.wait(tid, "lead_agent", input=None, checkpoint=parent)
    got = out["messages"]
    assert [m["type"] for m in got] == ["human", "ai"]
    assert got[0]["id"] == messages[0]["id"] and got[1]["id"] != messages[1]["id"]
    assert_paired(got)
