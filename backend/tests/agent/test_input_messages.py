"""Malformed ``input.messages`` are a 400 naming ``input.messages[i]``, and create no run.

A live server, driven through the official SDK: every run-creating endpoint (thread-bound
and stateless; create, wait, stream) rejects what LangChain cannot coerce to a message, and
accepts every shape it can (so we are never stricter than LangGraph). A graph whose
``messages`` is not an ``add_messages`` list is left alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk.errors import BadRequestError

from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state

PLAIN_GRAPH = """
from typing import TypedDict
from langgraph.graph import START, StateGraph


class State(TypedDict, total=False):
    messages: list
    count: int


def count(state: State) -> dict:
    return {"count": len(state.get("messages") or [])}


builder = StateGraph(State)
builder.add_node("count", count)
builder.add_edge(START, "count")
graph = builder.compile()
"""

BAD: list[tuple[Any, str]] = [
    ({"role": "bogus", "content": "hi"}, "Unexpected message type: 'bogus'"),
    ({"type": "robot", "content": "hi"}, "Unexpected message type: 'robot'"),
    ({"role": "user"}, "must contain 'role' and 'content'"),
    ({"content": "no role"}, "must contain 'role' and 'content'"),
    ({"role": "user", "content": 5}, "content"),
    ({"role": "user", "content": {"text": "hi"}}, "content"),
    ({"role": "tool", "content": "42"}, "tool_call_id"),
    ({"type": "ai", "content": "", "tool_calls": [{"name": "x"}]}, "not a valid message"),
    (7, "Unsupported message type"),
    (None, "Unsupported message type"),
    (["user", "hi", "extra"], "not a valid message"),
]

GOOD: list[Any] = [
    {"role": "user", "content": "plain role/content"},
    {"type": "human", "content": "type/content"},
    {"role": "human", "content": [{"type": "text", "text": "content blocks"}]},
    "a bare string",
    ["user", "a (role, content) pair"],
    {"role": "user", "content": None},
]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    workdir: Path = tmp_path_factory.mktemp("input-messages")
    (workdir / "plain_graph.py").write_text(PLAIN_GRAPH, encoding="utf-8")
    cfg = base_config(
        models=[{"name": "s", "provider": "scripted", "script": [], "options": {
            "fallback": {"text": "ok"}}}],
        agent={"default_model": "s"},
        graphs={"plain": "./plain_graph.py:graph"},
        sandbox={"isolation": "none"},
    )  # fmt: skip
    server = InProcessServer(workdir, cfg).start(timeout=120)
    yield server
    server.stop()


async def rejected(call: Callable[[], Awaitable[Any]]) -> str:
    """The detail of the 400 the SDK call got (``runs.wait`` raises httpx's own error)."""
    with pytest.raises((BadRequestError, httpx.HTTPStatusError)) as info:
        await call()
    response = info.value.response
    assert response.status_code == 400
    return response.json()["detail"]


async def drain(stream: AsyncIterator[Any]) -> None:
    async for _ in stream:
        pass


def _input(*messages: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": "fine"}, *messages]}


@pytest.mark.parametrize(("bad", "reason"), BAD, ids=[repr(b)[:30] for b, _ in BAD])
async def test_lead_agent_rejects_a_malformed_message(srv: InProcessServer, bad: Any, reason: str):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    detail = await rejected(lambda: client.runs.create(tid, "lead_agent", input=_input(bad)))
    assert detail.startswith("input.messages[1]: ") and reason in detail, detail
    assert "troubleshooting" not in detail  # one readable line
    assert await client.runs.list(tid) == []


async def test_every_endpoint_checks_and_writes_nothing(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    threads_before = len(await client.threads.search(limit=1000))
    bad = _input({"role": "assistant"})
    calls = {
        "create": lambda: client.runs.create(tid, "lead_agent", input=bad),
        "wait": lambda: client.runs.wait(tid, "lead_agent", input=bad),
        "stateless create": lambda: client.runs.create(None, "lead_agent", input=bad),
        "stateless wait": lambda: client.runs.wait(None, "lead_agent", input=bad),
    }
    for thread_id in (tid, None):
        calls[f"stream {thread_id}"] = lambda t=thread_id: drain(
            client.runs.stream(t, "lead_agent", input=bad)
        )
    for name, call in calls.items():
        assert (await rejected(call)).startswith("input.messages[1]: "), name
        assert await client.runs.list(tid) == [], name
    # An assistant id resolves to the same graph; a single message that is not a list too.
    assistant = await client.assistants.create("lead_agent")
    aid = assistant["assistant_id"]
    detail = await rejected(lambda: client.runs.create(tid, aid, input={"messages": 5}))
    assert detail.startswith("input.messages: ")
    detail = await rejected(lambda: client.runs.create(tid, "lead_agent", input={"messages": None}))
    assert "not null" in detail
    assert await client.runs.list(tid) == []
    # Stateless runs did not leave temporary threads behind either.
    assert len(await client.threads.search(limit=1000)) == threads_before


async def test_every_shape_langgraph_accepts_is_accepted(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "lead_agent", input={"messages": GOOD})
    humans = [m for m in as_state(out)["messages"] if m["type"] == "human"]
    assert len(humans) == len(GOOD)
    assert as_state(out)["messages"][-1]["type"] == "ai"
    # A single message instead of a list, as add_messages allows.
    single = await client.runs.wait(
        tid, "lead_agent", input={"messages": {"role": "user", "content": "one"}}
    )
    assert as_state(single)["messages"][-2]["content"] == "one"
    runs = await client.runs.list(tid)
    assert [r["status"] for r in runs] == ["success", "success"]


async def test_a_graph_whose_messages_is_not_add_messages_is_not_checked(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    odd: dict[str, Any] = {"messages": [{"role": "bogus"}, 7]}
    out = await client.runs.wait(tid, "plain", input=odd)
    assert as_state(out)["count"] == 2
    # ...while an add_messages graph (the echo test graph) is.
    bad: dict[str, Any] = {"messages": [{"role": "bogus", "content": ""}]}
    detail = await rejected(lambda: client.runs.create(tid, "echo", input=bad))
    assert detail.startswith("input.messages[0]: ")
