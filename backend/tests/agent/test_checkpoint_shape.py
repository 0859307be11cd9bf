"""How many checkpoints one lead-agent turn writes (the shape of LangGraph's prebuilt
ReAct agent: input, start, one before node, model, then two per tool round), through the
SDK's thread history of a real server with the offline demo model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from support.inproc import InProcessServer
from support.live import base_config

NO_TOOL_TURN = 4  # input, __start__, the turn's before node, model
PER_TOOL_ROUND = 2  # tools, model


@pytest.fixture(scope="module", params=["memory off", "memory on"])
def srv(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[InProcessServer]:
    # memory on (the server default) adds its after-run update hook to the chain
    memory = {"enabled": request.param == "memory on"}
    cfg = base_config(sandbox={"isolation": "none"}, memory=memory)
    server = InProcessServer(tmp_path_factory.mktemp("cp-shape"), cfg).start(timeout=120)
    yield server
    server.stop()


def _human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


async def _turn(client: Any, tid: str, text: str, **context: Any) -> tuple[dict[str, Any], int]:
    """Run one turn; return its output and the number of checkpoints it wrote."""
    before = len(await client.threads.get_history(tid, limit=1000))
    out = await client.runs.wait(tid, "lead_agent", input=_human(text), context=context)
    after = await client.threads.get_history(tid, limit=1000)
    return out, len(after) - before


async def test_a_no_tool_turn_writes_at_most_four_checkpoints(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out, written = await _turn(client, tid, "hi")
    assert [m["type"] for m in out["messages"]] == ["human", "ai"]
    assert out["title"] and out["thread_data"]  # the folded hooks still wrote state
    assert written <= NO_TOOL_TURN
    _, written = await _turn(client, tid, "hello again")  # a later turn: the same
    assert written <= NO_TOOL_TURN


async def test_a_tool_round_adds_at_most_two_checkpoints(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out, written = await _turn(client, tid, "make a plan for a trip")
    kinds = [m["type"] for m in out["messages"]]
    assert kinds == ["human", "ai", "tool", "ai"]
    assert out["todos"]
    assert written <= NO_TOOL_TURN + PER_TOOL_ROUND


async def test_a_three_round_turn_stays_within_the_bound(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out, written = await _turn(client, tid, "write a report about otters")
    rounds = sum(1 for m in out["messages"] if m["type"] == "ai" and m["tool_calls"])
    assert rounds == 3
    assert written <= NO_TOOL_TURN + rounds * PER_TOOL_ROUND


async def test_ultra_mode_adds_no_checkpoints(srv: InProcessServer):
    """Ultra mode adds the sub-agent limit guard (an after_model hook): still 4."""
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out, written = await _turn(client, tid, "hi", subagent_enabled=True)
    assert [m["type"] for m in out["messages"]] == ["human", "ai"]
    assert written <= NO_TOOL_TURN
