"""GET /api/threads/{id}/token-usage: sums and per-run numbers from runs of a scripted
model that reports usage (through a one-call test graph and through the lead agent)."""

from __future__ import annotations

from support.inproc import InProcessServer
from support.sdk import as_state


async def test_token_usage_sums_runs(srv: InProcessServer) -> None:
    client = srv.sdk()
    thread = await client.threads.create()
    tid = thread["thread_id"]
    async with srv.ahttp(base_url=srv.url) as http:
        empty = (await http.get(f"/api/threads/{tid}/token-usage")).json()
        assert empty == {
            "input_tokens": 0,
            "output_tokens": 0,
            "total_tokens": 0,
            "llm_calls": 0,
            "runs": [],
            "thread_id": tid,
            "total_input_tokens": 0,
            "total_output_tokens": 0,
            "total_runs": 0,
            "by_model": {},
            "include_active": False,
        }
        first = await client.runs.wait(
            tid, "usage_model", input={"messages": [{"role": "user", "content": "a"}]}
        )
        assert as_state(first)["messages"][-1]["content"] == "hi"
        await client.runs.wait(
            tid,
            "usage_model",
            input={"messages": [{"role": "user", "content": "b"}]},
            context={"model_name": "s"},
        )
        usage = (await http.get(f"/api/threads/{tid}/token-usage")).json()
    assert {k: usage[k] for k in ("input_tokens", "output_tokens", "total_tokens")} == {
        "input_tokens": 250,
        "output_tokens": 10,
        "total_tokens": 260,
    }
    assert usage["llm_calls"] == 2
    runs = usage["runs"]
    assert [(r["status"], r["input_tokens"], r["output_tokens"], r["llm_calls"]) for r in runs] == [
        ("success", 100, 7, 1),
        ("success", 150, 3, 1),
    ]
    assert [r["model_name"] for r in runs] == [None, "s"]
    assert all(r["run_id"] and r["created_at"] for r in runs)
    assert runs[0]["total_tokens"] == 107


async def test_token_usage_of_a_lead_agent_run(srv: InProcessServer) -> None:
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(
        tid, "lead_agent", input={"messages": [{"role": "user", "content": "hello"}]}
    )
    async with srv.ahttp(base_url=srv.url) as http:
        usage = (await http.get(f"/api/threads/{tid}/token-usage")).json()
    (run,) = usage["runs"]
    assert run["status"] == "success"
    assert usage["llm_calls"] >= 1 and run["llm_calls"] == usage["llm_calls"]
    assert usage["input_tokens"] >= 100 and usage["output_tokens"] >= 7
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


async def test_token_usage_by_model_and_include_active(srv: InProcessServer) -> None:
    """DeerFlow's fields: totals, run count and the per-model breakdown of the lead agent's
    calls; include_active adds the calls of runs still in flight (none here)."""
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(
        tid, "lead_agent", input={"messages": [{"role": "user", "content": "hello"}]}
    )
    async with srv.ahttp(base_url=srv.url) as http:
        usage = (await http.get(f"/api/threads/{tid}/token-usage")).json()
        active = (await http.get(f"/api/threads/{tid}/token-usage?include_active=true")).json()
        bad = await http.get(f"/api/threads/{tid}/token-usage?include_active=maybe")
    assert usage["total_runs"] == 1 and usage["thread_id"] == tid
    assert usage["total_input_tokens"] == usage["input_tokens"]
    (model,) = usage["by_model"].values()
    assert model["model"] == "s" and model["runs"] == 1
    assert model["tokens"] == model["input_tokens"] + model["output_tokens"] > 0
    assert model["llm_calls"] == usage["llm_calls"]
    assert active["include_active"] is True and active["total_tokens"] == usage["total_tokens"]
    assert bad.status_code == 422
