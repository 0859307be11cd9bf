"""Sub-agents end to end: the lead agent's ``task`` calls through the real gateway with
scripted models — concurrency, limits, cancel, timeout, max_turns, events and usage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from support.inproc import InProcessServer
from support.live import base_config

ULTRA = {"subagent_enabled": True}


def task(description: str, prompt: str, kind: str = "general-purpose") -> dict[str, Any]:
    return {
        "name": "task",
        "args": {"description": description, "prompt": prompt, "subagent_type": kind},
    }


def calls(*tool_calls: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(tool_calls)}


def ls(n: int) -> dict[str, Any]:
    folder = ("workspace", "outputs", "uploads")[n % 3]
    return {"name": "ls", "args": {"description": f"look {n}", "path": f"/mnt/user-data/{folder}"}}


RULES: list[dict[str, Any]] = [
    # the lead agent
    {
        "match": "three in parallel",
        "steps": [
            calls(
                task("alpha part", "sub alpha: do it"),
                task("beta part", "sub beta: do it"),
                task("gamma part", "sub gamma: do it", "bash"),
            ),
            {"text": "All three parts are done."},
        ],
    },
    {
        "match": "too many at once",
        "steps": [
            calls(
                task("one", "sub alpha: 1"),
                task("two", "sub beta: 2"),
                task("three", "sub gamma: 3"),
            ),
            {"text": "Two ran."},
        ],
    },
    {
        "match": "too many per run",
        "steps": [
            calls(task("one", "sub alpha: 1"), task("two", "sub beta: 2")),
            calls(task("three", "sub gamma: 3"), task("four", "sub alpha: 4")),
            {"text": "Three ran."},
        ],
    },
    {"match": "delegate slow", "steps": [calls(task("slow job", "sub slow: wait")), {"text": "x"}]},
    {
        "match": "delegate to the impatient",
        "steps": [calls(task("hurried", "sub slow: wait", "impatient")), {"text": "Too slow."}],
    },
    {
        "match": "delegate to the short one",
        "steps": [calls(task("walker", "sub walk: go", "short")), {"text": "Stopped early."}],
    },
    {
        "match": "delegate to nobody",
        "steps": [calls(task("?", "sub alpha: x", "no-such-type")), {"text": "Unknown."}],
    },
    {
        "match": "ask my researcher",
        "steps": [calls(task("research", "sub alpha: find", "researcher")), {"text": "Found."}],
    },
    {
        "match": "two with one slot",
        "steps": [
            calls(task("first", "sub beta: 1"), task("second", "sub beta: 2")),
            {"text": "Both ran, one after the other."},
        ],
    },
]


def sub_agents(scale: float) -> list[dict[str, Any]]:
    """The sub-agents' rules (their prompt is their human message); alpha, beta and gamma
    take `scale` x 1, 1 and 1.5 s to answer."""
    return [
        {"match": "sub alpha", "steps": [{"text": "alpha result", "latency_s": 1.0 * scale}]},
        {"match": "sub beta", "steps": [{"text": "beta result", "latency_s": 1.0 * scale}]},
        {"match": "sub gamma", "steps": [{"text": "gamma result", "latency_s": 1.5 * scale}]},
        {"match": "sub slow", "steps": [{"text": "never", "latency_s": 60}]},
        {
            "match": "sub walk",
            "steps": [calls(ls(1)), calls(ls(2)), calls(ls(3)), {"text": "walked"}],
        },
    ]


def config(scale: float = 1.0, **subagents: Any) -> dict[str, Any]:
    """`scale`: of the sub-agents' answer times (whole seconds where tests time overlaps)."""
    rules = [*RULES, *sub_agents(scale)]
    return base_config(
        models=[{"name": "s", "provider": "scripted", "rules": rules}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        subagents={
            "max_per_response": 3,
            "max_per_run": 6,
            "types": {
                "impatient": {"description": "gives up fast", "timeout_s": 0.3},
                "short": {"description": "two turns", "max_turns": 2, "tools": ["ls"]},
            },
            **subagents,
        },
    )


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    server = InProcessServer(tmp_path_factory.mktemp("subagents"), config()).start(timeout=120)
    yield server
    server.stop()


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


async def stream(client: Any, tid: str, text: str, **kw: Any) -> list[Any]:
    kw.setdefault("context", ULTRA)
    return [
        p
        async for p in client.runs.stream(
            tid, "lead_agent", input=human(text), stream_mode=["custom", "values"], **kw
        )
    ]


def custom(parts: list[Any]) -> list[dict[str, Any]]:
    return [p.data for p in parts if p.event == "custom"]


def final_messages(parts: list[Any]) -> list[dict[str, Any]]:
    return [p.data for p in parts if p.event == "values"][-1]["messages"]


def tool_results(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["tool_call_id"]: m for m in messages if m["type"] == "tool"}


async def test_three_tasks_run_concurrently_and_report(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "do three in parallel")
    events = custom(parts)
    kinds = [e["type"] for e in events]
    # all three started before any finished: they overlapped
    first_end = min(i for i, k in enumerate(kinds) if k == "task_completed")
    assert kinds[:first_end].count("task_started") == 3
    assert kinds.count("task_completed") == 3
    started = {e["task_id"]: e for e in events if e["type"] == "task_started"}
    done = {e["task_id"]: e for e in events if e["type"] == "task_completed"}
    assert set(started) == set(done)
    assert {e["subagent_type"] for e in started.values()} == {"general-purpose", "bash"}
    assert {e["description"] for e in started.values()} == {"alpha part", "beta part", "gamma part"}
    assert {e["result"] for e in done.values()} == {"alpha result", "beta result", "gamma result"}
    # each task: started, then its steps, then its end, in that order
    for tid_ in started:
        mine = [e["type"] for e in events if e["task_id"] == tid_]
        assert mine[0] == "task_started" and mine[-1] == "task_completed"
        assert "task_running" in mine[1:-1]
    # wall time ≈ the slowest, not the sum: the span of the three is below their sum
    durations = [e["duration_s"] for e in done.values()]
    assert min(durations) >= 1.0
    span = max(
        e["started_at"] + e2["duration_s"] for e, e2 in ((started[k], done[k]) for k in done)
    )
    span -= min(e["started_at"] for e in started.values())
    assert span < sum(durations) - 1.0
    # the lead agent read each outcome in its tool result, with structured details
    messages = final_messages(parts)
    results = tool_results(messages)
    assert set(results) == set(done)
    for call_id, msg in results.items():
        assert msg["name"] == "task" and msg["status"] == "success"
        assert msg["content"].startswith("Task completed")
        assert done[call_id]["result"] in msg["content"]
        assert msg["artifact"]["status"] == "completed"
        assert msg["artifact"]["steps"][-1]["content"] == done[call_id]["result"]
    assert messages[-1]["content"] == "All three parts are done."


async def test_events_replay_after_reconnect_and_usage_rolls_up(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "do three in parallel")
    live = custom(parts)
    run_id = parts[0].data["run_id"]
    # a client that reconnects from the start replays every progress event, in order
    replayed = [
        p.data
        async for p in client.runs.join_stream(tid, run_id, last_event_id="-1")
        if p.event == "custom"
    ]
    assert replayed == live
    # and one that saw part of them resumes after the last one it saw
    seen = [p for p in parts if p.event == "custom"][:4]
    rest = [
        p.data
        async for p in client.runs.join_stream(tid, run_id, last_event_id=seen[-1].id)
        if p.event == "custom"
    ]
    assert [p.data for p in seen] + rest == live
    # per-task usage, and the run's usage includes every sub-agent's model call
    done = [e for e in live if e["type"] == "task_completed"]
    assert all(e["usage"]["llm_calls"] == 1 and e["usage"]["total_tokens"] > 0 for e in done)
    async with srv.ahttp() as http:
        usage = (await http.get(f"{srv.url}/api/threads/{tid}/token-usage")).json()
    assert usage["llm_calls"] == 2 + 3
    sub_total = sum(e["usage"]["total_tokens"] for e in done)
    assert usage["total_tokens"] > sub_total > 0


async def test_unknown_type_is_an_error_result(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "delegate to nobody")
    (result,) = tool_results(final_messages(parts)).values()
    assert result["status"] == "error"
    assert "unknown subagent_type 'no-such-type'" in result["content"]
    assert "general-purpose" in result["content"] and "impatient" in result["content"]
    assert custom(parts) == []


async def test_without_ultra_mode_there_is_no_task_tool(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "do three in parallel", context={})
    results = tool_results(final_messages(parts))
    assert results and all(r["status"] == "error" for r in results.values())
    assert all(
        "task" in r["content"] and "not a valid tool" in r["content"] for r in results.values()
    )
    assert custom(parts) == []


async def test_timeout_ends_with_timed_out(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "delegate to the impatient")
    events = custom(parts)
    assert [e["type"] for e in events] == ["task_started", "task_timed_out"]
    end = events[-1]
    assert end["status"] == "timed_out" and end["stop_reason"] == "timeout"
    assert "0.3s" in end["error"]
    (result,) = tool_results(final_messages(parts)).values()
    assert result["status"] == "error"
    assert result["content"].startswith("Task timed_out (stop reason: timeout)")


async def test_max_turns_stops_the_sub_agent(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "delegate to the short one")
    events = custom(parts)
    end = events[-1]
    assert end["type"] == "task_failed" and end["stop_reason"] == "max_turns"
    assert end["usage"]["llm_calls"] == 2
    # the last step is sent again, rewritten, under the same index: no tool calls now
    steps: dict[int, dict[str, Any]] = {}
    for e in events:
        if e["type"] == "task_running":
            steps[e["message_index"]] = e["message"]
    assert [s["type"] for _, s in sorted(steps.items())] == ["ai", "tool", "ai"]
    assert steps[3]["tool_calls"] == [] and "limit of 2 turns" in steps[3]["content"]
    (result,) = tool_results(final_messages(parts)).values()
    assert "(stop reason: max_turns)" in result["content"]


async def test_cancel_stops_sub_agents_at_once(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(
        tid, "lead_agent", input=human("delegate slow"), context=ULTRA, stream_mode=["custom"]
    )
    async for part in client.runs.join_stream(tid, run["run_id"], stream_mode=["custom"]):
        if part.event == "custom" and part.data["type"] == "task_started":
            break
    t0 = time.monotonic()
    await client.runs.cancel(tid, run["run_id"], wait=True)
    elapsed = time.monotonic() - t0
    # the sub-agent's 60 s model call was cancelled with its run, not waited for (the bound
    # is loose: a loaded machine must not fail it; any wait for the call would take 60 s)
    assert elapsed < 30.0
    assert (await client.runs.get(tid, run["run_id"]))["status"] == "interrupted"
    events = [
        p.data
        async for p in client.runs.join_stream(tid, run["run_id"], last_event_id="-1")
        if p.event == "custom"
    ]
    # the end event reaches the log although the run's stream ended with the cancel
    assert [e["type"] for e in events] == ["task_started", "task_cancelled"]
    assert events[1]["task_id"] == events[0]["task_id"]
    assert events[1]["status"] == "cancelled" and events[1]["stop_reason"] == "parent_cancelled"


async def test_custom_agent_is_a_sub_agent_type(srv: InProcessServer):
    client = srv.sdk()
    agent = await client.assistants.create(
        "lead_agent",
        name="researcher",
        context={
            "agent_name": "researcher",
            "system_prompt": "Be terse.",
            "subagent_enabled": True,
        },
    )
    tid = (await client.threads.create())["thread_id"]
    # enabled by the assistant's context: the run itself does not ask for ultra mode
    parts = [
        p
        async for p in client.runs.stream(
            tid,
            agent["assistant_id"],
            input=human("ask my researcher"),
            stream_mode=["custom", "values"],
        )
    ]
    events = custom(parts)
    assert events[0]["subagent_type"] == "researcher"
    assert events[-1]["type"] == "task_completed" and events[-1]["result"] == "alpha result"


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    # The caps are counted and the queue is seen in the events, not timed: quick sub-agents.
    cfg = config(scale=0.1, max_per_response=2, max_per_run=3, max_concurrent=1)
    server = InProcessServer(tmp_path_factory.mktemp("capped"), cfg).start(timeout=120)
    yield server
    server.stop()


async def test_per_response_cap_truncates_with_a_visible_note(capped: InProcessServer):
    client = capped.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "too many at once")
    messages = final_messages(parts)
    ai = next(m for m in messages if m["type"] == "ai" and m["tool_calls"])
    assert [c["args"]["description"] for c in ai["tool_calls"]] == ["one", "two"]
    assert "1 task call(s) not run (at most 2 per response): 'three'" in ai["content"]
    assert len(tool_results(messages)) == 2
    assert [e["type"] for e in custom(parts)].count("task_started") == 2


async def test_per_run_cap_counts_every_turn(capped: InProcessServer):
    client = capped.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "too many per run")
    messages = final_messages(parts)
    turns = [m for m in messages if m["type"] == "ai" and m["tool_calls"]]
    assert [len(m["tool_calls"]) for m in turns] == [2, 1]
    assert "(at most 3 per run): 'four'" in turns[1]["content"]
    assert [e["type"] for e in custom(parts)].count("task_completed") == 3


async def test_global_cap_queues_sub_agents(capped: InProcessServer):
    client = capped.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, "two with one slot")
    events = custom(parts)
    waiting = [
        e for e in events if e["type"] == "task_running" and e["message"]["type"] == "status"
    ]
    assert len(waiting) == 1
    second = waiting[0]["task_id"]
    # the waiting one only started working after the other one ended
    kinds = [(e["type"], e["task_id"]) for e in events]
    first_end = next(i for i, (k, t) in enumerate(kinds) if k == "task_completed")
    assert kinds[first_end][1] != second
    assert all(
        not (k == "task_running" and t == second and events[i]["message"]["type"] != "status")
        for i, (k, t) in enumerate(kinds[:first_end])
    )
    assert [k for k, _ in kinds].count("task_completed") == 2


async def test_demo_model_delegates_in_ultra_mode_only(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    ask = "research otters in parallel"
    parts = await stream(client, tid, ask, context={**ULTRA, "model_name": "demo"})
    events = custom(parts)
    done = [e for e in events if e["type"] == "task_completed"]
    assert len(done) == 3 and all(e["result"].startswith("Notes on ") for e in done)
    kinds = [e["type"] for e in events]
    assert kinds.index("task_completed") > max(
        i for i, k in enumerate(kinds) if k == "task_started"
    )
    # each sub-agent looked at the workspace first (a tool step in its trail)
    tools = [e for e in events if e["type"] == "task_running" and e["message"]["type"] == "tool"]
    assert len(tools) == 3 and {t["message"]["name"] for t in tools} == {"ls"}
    final = final_messages(parts)[-1]["content"]
    assert final.startswith("Here is what the sub-agents found:") and final.count("Notes on") == 3
    # without ultra mode the demo model answers itself
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(client, tid, ask, context={"model_name": "demo"})
    assert custom(parts) == [] and "task" not in str(final_messages(parts)[-1]["tool_calls"])
