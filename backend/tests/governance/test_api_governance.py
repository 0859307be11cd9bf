"""Budgets and tool approvals through the server (SDK + HTTP, in-process app, scripted
model): refusal before the model call, the usage API, approve / deny / stale / duplicate /
timeout, and a waiting approval holding no concurrency slot."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk.schema import Run

from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state, values

SPEND = {"input_tokens": 900, "output_tokens": 100, "total_tokens": 1000}
RULES: list[dict[str, Any]] = [
    {
        "match": ["run echo"],
        "steps": [
            {
                "tool_calls": [
                    {
                        "name": "bash",
                        "args": {"command": "echo approved-ran", "description": "say it"},
                    }
                ]
            },
            {"text": "finished"},
        ],
    },
    {
        "match": ["two commands"],
        "steps": [
            {
                "tool_calls": [
                    {"name": "bash", "args": {"command": "echo one", "description": "1"}},
                    {"name": "bash", "args": {"command": "echo two", "description": "2"}},
                ]
            },
            {"text": "both handled"},
        ],
    },
    {
        "match": ["wipe"],
        "steps": [
            {"tool_calls": [{"name": "bash", "args": {"command": "rm -rf /", "description": "x"}}]},
            {"text": "I will not do that then."},
        ],
    },
    {"match": ["spend"], "text": "spent", "usage": SPEND},
    {"text": "plain", "usage": {"input_tokens": 5, "output_tokens": 5, "total_tokens": 10}},
]


def config(**extra: Any) -> dict[str, Any]:
    return base_config(
        models=[
            {
                "name": "s",
                "provider": "scripted",
                "rules": RULES,
                "pricing": {"input_per_million": 1.0, "output_per_million": 2.0},
            }
        ],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        **extra,
    )


@pytest.fixture(scope="module")
def budget_srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    cfg = config(budgets={"per_user_daily": {"tokens": 1200}, "per_run": {"cost_usd": 5.0}})
    server = InProcessServer(tmp_path_factory.mktemp("budget"), cfg).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def approval_srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    cfg = config(
        approvals={"tools": ["@shell"], "timeout_s": 3600},
        guardrails={"rules": {"deny_commands": [r"rm\s+-rf\s+/"]}},
        runs={"max_concurrency": 1},
    )
    server = InProcessServer(tmp_path_factory.mktemp("approvals"), cfg).start()
    yield server
    server.stop()


def msg(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_budget_refusal_before_the_model_call(budget_srv: InProcessServer) -> None:
    client = budget_srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    first = await client.runs.wait(tid, "lead_agent", input=msg("spend it"))
    assert as_state(first)["messages"][-1]["content"] == "spent"
    run = await client.runs.create(tid, "lead_agent", input=msg("spend more"))
    await client.runs.join(tid, run["run_id"])
    refused = await client.runs.get(tid, run["run_id"])
    assert refused["status"] == "error"
    async with budget_srv.ahttp(base_url=budget_srv.url) as http:
        usage = (await http.get(f"/api/threads/{tid}/token-usage")).json()
        budget = (await http.get("/api/usage/budget")).json()
        thread = (await http.get(f"/api/langgraph/threads/{tid}")).json()
    assert thread["error"]["error"] == "budget_exceeded"
    assert "daily tokens budget" in thread["error"]["message"]
    per_run = {r["run_id"]: r for r in usage["runs"]}
    assert per_run[run["run_id"]]["llm_calls"] == 0  # the model never got the request
    assert usage["by_model"]["s"]["llm_calls"] == 1
    assert budget["daily"]["tokens_limit"] == 1200
    assert budget["daily"]["tokens_used"] == 1000
    assert budget["daily"]["tokens_remaining"] == 200
    assert budget["daily"]["cost_used_usd"] == pytest.approx((900 + 200) / 1e6)
    assert budget["per_run"]["cost_limit_usd"] == 5.0


@pytest.fixture(scope="module")
def streamed_budget_srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    """A server of its own: the streaming test spends its own budget, so it passes alone
    and in any order (sharing budget_srv, it relied on the refusal test having run first)."""
    cfg = config(budgets={"per_user_daily": {"tokens": 1200}})
    server = InProcessServer(tmp_path_factory.mktemp("budget-stream"), cfg).start()
    yield server
    server.stop()


async def test_budget_error_is_streamed(streamed_budget_srv: InProcessServer) -> None:
    client = streamed_budget_srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    spent = await client.runs.wait(tid, "lead_agent", input=msg("spend it"))
    assert as_state(spent)["messages"][-1]["content"] == "spent"  # 1,000 of the 1,200 tokens
    events = [
        (p.event, p.data)
        async for p in client.runs.stream(tid, "lead_agent", input=msg("anything"))
    ]
    errors = [d for e, d in events if e == "error"]
    assert errors and errors[0]["error"] == "budget_exceeded"


async def _interrupt_of(client: Any, tid: str) -> dict[str, Any]:
    state = await client.threads.get_state(tid)
    (intr,) = [i for task in state["tasks"] for i in task["interrupts"]]
    return intr["value"]


def tool_texts(state: object) -> list[str]:
    return [str(m["content"]) for m in as_state(state)["messages"] if m["type"] == "tool"]


def tool_results(state: object) -> list[dict[str, Any]]:
    return [m for m in as_state(state)["messages"] if m["type"] == "tool"]


async def test_approve_runs_the_call(approval_srv: InProcessServer) -> None:
    client = approval_srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "lead_agent", input=msg("run echo"))
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    ask = await _interrupt_of(client, tid)
    assert ask["type"] == "tool_approval" and ask["tool"] == "bash"
    assert ask["args"] == {"command": "echo approved-ran", "description": "say it"}
    assert ask["call_id"]
    out = await client.runs.wait(
        tid,
        "lead_agent",
        command={"resume": {"approved": True, "call_id": ask["call_id"]}},
    )
    (result,) = tool_results(out)
    assert result["status"] == "success" and "approved-ran" in str(result["content"])
    assert "Error" not in str(result["content"])
    assert as_state(out)["messages"][-1]["content"] == "finished"
    # a duplicate of the same answer is ignored: nothing runs again
    again = await client.runs.wait(
        tid, "lead_agent", command={"resume": {"approved": True, "call_id": ask["call_id"]}}
    )
    assert len(tool_texts(again)) == 1
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_deny_and_stale_answer(approval_srv: InProcessServer) -> None:
    client = approval_srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "lead_agent", input=msg("run echo"))
    ask = await _interrupt_of(client, tid)
    await client.runs.wait(
        tid, "lead_agent", command={"resume": {"approved": False, "call_id": "stale"}}
    )
    assert (await client.threads.get(tid))["status"] == "interrupted"
    assert (await _interrupt_of(client, tid))["call_id"] == ask["call_id"]
    out = await client.runs.wait(
        tid,
        "lead_agent",
        command={"resume": {"approved": False, "reason": "not now", "call_id": ask["call_id"]}},
    )
    (text,) = tool_texts(out)
    assert "did not approve" in text and "not now" in text and "approved-ran" not in text


async def test_two_pending_approvals_answered_one_at_a_time(
    approval_srv: InProcessServer,
) -> None:
    client = approval_srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "lead_agent", input=msg("two commands"))
    state = await client.threads.get_state(tid)
    pending = [i for task in state["tasks"] for i in task["interrupts"]]
    assert sorted(i["value"]["args"]["command"] for i in pending) == ["echo one", "echo two"]
    first = next(i for i in pending if i["value"]["args"]["command"] == "echo one")
    answer = {"approved": True, "call_id": first["value"]["call_id"]}
    await client.runs.wait(tid, "lead_agent", command={"resume": {first["id"]: answer}})
    state = await client.threads.get_state(tid)
    (left,) = [i for task in state["tasks"] for i in task["interrupts"]]
    assert left["value"]["args"]["command"] == "echo two"
    deny = {"approved": False, "call_id": left["value"]["call_id"]}
    out = await client.runs.wait(tid, "lead_agent", command={"resume": {left["id"]: deny}})
    results = tool_results(out)
    assert [r["status"] for r in results] == ["success", "error"]
    assert "one" in str(results[0]["content"]) and "did not approve" in str(results[1]["content"])
    assert as_state(out)["messages"][-1]["content"] == "both handled"


async def test_waiting_approval_frees_its_slot(approval_srv: InProcessServer) -> None:
    client = approval_srv.sdk()
    waiting = (await client.threads.create())["thread_id"]
    await client.runs.wait(waiting, "lead_agent", input=msg("run echo"))
    assert (await client.threads.get(waiting))["status"] == "interrupted"
    other = (await client.threads.create())["thread_id"]
    # max_concurrency is 1: this only finishes if the waiting run holds no slot
    out = await asyncio.wait_for(client.runs.wait(other, "lead_agent", input=msg("hi")), 60)
    assert as_state(out)["messages"][-1]["content"] == "plain"


async def test_unanswered_approval_times_out_as_a_denial(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    cfg = config(approvals={"tools": ["bash"], "timeout_s": 0.2, "sweep_interval_s": 0.05})
    server = InProcessServer(tmp_path_factory.mktemp("timeout"), cfg).start()
    try:
        client = server.sdk()
        tid = (await client.threads.create())["thread_id"]
        await client.runs.wait(tid, "lead_agent", input=msg("two commands"))
        runs: list[Run] = []
        async with asyncio.timeout(60):
            while len(runs) < 2 or any(r["status"] in ("pending", "running") for r in runs):
                await asyncio.sleep(0.05)  # waiting on the sweeper's run (no event to wait on)
                runs = await client.runs.list(tid)
        resumed = next(r for r in runs if (r["metadata"] or {}).get("approval_timeout"))
        assert resumed["status"] == "success"
        state = await client.threads.get_state(tid)
        texts = tool_texts(state["values"])
        assert len(texts) == 2 and all("approval timed out" in t for t in texts)
        assert values(state)["messages"][-1]["content"] == "both handled"
    finally:
        server.stop()


async def test_guardrail_blocks_before_approval_and_audits(approval_srv: InProcessServer) -> None:
    client = approval_srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "lead_agent", input=msg("wipe the disk"))
    (result,) = tool_results(out)
    assert result["status"] == "error" and "blocked by guardrail (rules)" in result["content"]
    assert as_state(out)["messages"][-1]["content"] == "I will not do that then."
    assert (await client.threads.get(tid))["status"] == "idle"  # nobody was asked
    db = sqlite3.connect(approval_srv.workdir / "data" / "pronghorn.db")
    try:
        rows = db.execute(
            "SELECT actor, detail FROM audit_log WHERE action = 'guardrail.blocked' AND target = ?",
            (tid,),
        ).fetchall()
    finally:
        db.close()
    ((actor, detail),) = rows
    assert actor == "local"
    assert json.loads(detail)["tool"] == "bash"
    assert "rm -rf /" in json.loads(detail)["args_preview"]
