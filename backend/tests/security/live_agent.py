"""A live gateway whose lead agent is a scripted model, for attacks through the real tools.

``start_agent_server`` starts ``pronghorn serve`` (real HTTP, SQLite, sandbox) with a
scripted model whose ``rules`` map a user message to the tool calls it makes. The machine
may be loaded, so the server gets a generous start-up deadline.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from support.live import LiveServer, base_config

START_TIMEOUT_S = 180.0


def call(name: str, **args: Any) -> dict[str, Any]:
    """A scripted step with one tool call."""
    return {"tool_calls": [{"name": name, "args": args}]}


def calls(*tool_calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A scripted step with several tool calls in one AI message (run concurrently)."""
    return {"tool_calls": [{"name": n, "args": a} for n, a in tool_calls]}


def start_agent_server(workdir: Path, rules: list[dict[str, Any]], **config: Any) -> LiveServer:
    cfg = base_config(
        models=[{"name": "s", "provider": "scripted", "rules": rules}],
        agent={"default_model": "s"},
        **config,
    )
    return LiveServer(workdir, cfg).start(timeout=START_TIMEOUT_S)


def new_thread(http: httpx.Client) -> str:
    r = http.post("/api/langgraph/threads", json={})
    assert r.status_code == 200, r.text
    return r.json()["thread_id"]


def start_run(http: httpx.Client, thread_id: str, text: str) -> str:
    r = http.post(
        f"/api/langgraph/threads/{thread_id}/runs",
        json={
            "assistant_id": "lead_agent",
            "input": {"messages": [{"role": "human", "content": text}]},
        },
    )
    assert r.status_code == 200, r.text
    return r.json()["run_id"]


def wait_run(http: httpx.Client, thread_id: str, run_id: str, timeout_s: float) -> dict[str, Any]:
    """Poll the run until it is final; returns the run record."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = http.get(f"/api/langgraph/threads/{thread_id}/runs/{run_id}").json()
        if run["status"] not in ("pending", "running"):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} still not final after {timeout_s}s")


def tool_messages(http: httpx.Client, thread_id: str) -> list[dict[str, Any]]:
    state = http.get(f"/api/langgraph/threads/{thread_id}/state").json()
    return [m for m in state["values"]["messages"] if m["type"] == "tool"]


def thread_dir(server: LiveServer, thread_id: str) -> Path:
    return server.workdir / "data" / "users" / "local" / "threads" / thread_id
