"""The real ``lead_agent`` end to end: a live ``pronghorn serve`` driven through the SDK,
with scripted models (and the fake OpenAI server for provider errors)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.openai_server import FakeOpenAIServer, Reply
from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state

OUT = "/mnt/user-data/outputs"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


RULES = [
    {
        "match": "write and present",
        "steps": [
            _call(
                "write_file",
                description="write",
                path=f"{OUT}/notes.md",
                content="# Notes\nhello\n",
            ),
            _call("bash", description="count", command=f"wc -l {OUT}/notes.md"),
            _call("read_file", description="read back", path=f"{OUT}/notes.md"),
            _call("present_files", filepaths=[f"{OUT}/notes.md"]),
            {"text": "Here are your notes, all checked and shared."},
        ],
    },
    {
        "match": "forbidden",
        "steps": [
            _call("read_file", description="try", path="/etc/passwd"),
            {"text": "That path is not allowed, so I recovered."},
        ],
    },
    {
        "match": "big output",
        "steps": [
            _call("bash", description="lots", command="seq 1 6000"),
            {"text": "The output was long."},
        ],
    },
    {
        "match": "loop forever",
        "steps": [_call("bash", description="same", command="echo same")] * 8,
    },
]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(default=Reply.text("A Short Title")) as server:
        yield server


@pytest.fixture(scope="module")
def srv(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAIServer
) -> Iterator[InProcessServer]:
    models = [
        {"name": "s", "provider": "scripted", "rules": RULES},
        {
            "name": "oa",
            "provider": "openai",
            "model": "gpt-test",
            "base_url": fake.base_url,
            "api_key": "sk-test",
            "max_retries": 1,  # the agent retries once (the SDK never does)
        },
    ]
    cfg = base_config(
        models=models,
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
    )
    server = InProcessServer(tmp_path_factory.mktemp("agent-e2e"), cfg).start(timeout=120)
    yield server
    server.stop()


def _human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


def _data_dir(srv: InProcessServer) -> Path:
    return srv.workdir / "data"


async def _run(client, tid: str, text: str, **kw: Any) -> dict[str, Any]:
    return await client.runs.wait(tid, "lead_agent", input=_human(text), **kw)


async def test_write_bash_read_present_and_download(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = [
        p
        async for p in client.runs.stream(
            tid,
            "lead_agent",
            input=_human("please write and present notes"),
            stream_mode=["messages-tuple", "values"],
        )
    ]
    final = [p.data for p in parts if p.event == "values"][-1]
    msgs = final["messages"]
    assert msgs[-1]["content"] == "Here are your notes, all checked and shared."
    tools = {m["name"]: m for m in msgs if m["type"] == "tool"}
    assert set(tools) == {"write_file", "bash", "read_file", "present_files"}
    assert tools["bash"]["content"].startswith("2 /mnt/user-data/outputs/notes.md")
    assert "hello" in tools["read_file"]["content"]
    assert all(m.get("status") != "error" for m in tools.values())
    assert final["artifacts"] == [f"{OUT}/notes.md"]
    assert final["title"] == "please write and present notes"
    # the final answer streamed token by token
    chunks = [
        p.data[0]
        for p in parts
        if p.event == "messages" and p.data[0].get("type") == "AIMessageChunk"
    ]
    final_id = msgs[-1]["id"]
    words = [c["content"] for c in chunks if c["id"] == final_id and c["content"]]
    assert len(words) >= 5 and "".join(words) == msgs[-1]["content"]
    # downloadable over HTTP
    async with srv.ahttp() as http:
        r = await http.get(f"{srv.url}/api/threads/{tid}/artifacts/outputs/notes.md")
        assert r.status_code == 200 and r.text == "# Notes\nhello\n"
        usage = (await http.get(f"{srv.url}/api/threads/{tid}/token-usage")).json()
    assert usage["llm_calls"] == 5 and usage["total_tokens"] > 0
    assert usage["runs"][0]["input_tokens"] > 0


async def test_raising_tool_is_recovered(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await _run(client, tid, "read something forbidden")
    err = next(m for m in out["messages"] if m["type"] == "tool")
    assert err["status"] == "error" and "denied" in err["content"].lower()
    assert out["messages"][-1]["content"] == "That path is not allowed, so I recovered."


async def test_big_output_is_externalized(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await _run(client, tid, "make a big output")
    tool = next(m for m in out["messages"] if m["type"] == "tool")
    assert ".tool-results/" in tool["content"] and len(tool["content"]) < 5000
    name = tool["content"].split(".tool-results/")[1].split(" ")[0].rstrip(".")
    async with srv.ahttp() as http:
        r = await http.get(f"{srv.url}/api/threads/{tid}/artifacts/outputs/.tool-results/{name}")
    assert r.status_code == 200
    lines = r.text.splitlines()
    assert lines[:3] == ["1", "2", "3"] and "6000" in lines[-3:]


async def test_loop_detection_stops_a_looping_script(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await _run(client, tid, "loop forever please")
    last = out["messages"][-1]
    assert last["type"] == "ai" and not last["tool_calls"] and "Stopped" in last["content"]
    assert sum(m["type"] == "tool" for m in out["messages"]) == 4
    run = (await client.runs.list(tid))[0]
    assert run["status"] == "success"


async def test_demo_model_clarification_interrupt_and_resume(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    ctx = {"model_name": "demo"}
    out = await _run(client, tid, "ask me a question", context=ctx)
    (intr,) = out["__interrupt__"]
    assert intr["value"]["type"] == "clarification"
    assert intr["value"]["options"] == ["A short summary", "A detailed report", "A bullet list"]
    assert (await client.threads.get(tid))["status"] == "interrupted"
    out = await client.runs.wait(
        tid, "lead_agent", command={"resume": "A bullet list"}, context=ctx
    )
    answer = next(m for m in as_state(out)["messages"] if m["type"] == "tool")
    assert answer["content"] == "A bullet list"
    assert "you chose: A bullet list" in as_state(out)["messages"][-1]["content"]
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_demo_model_whole_flow(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await _run(client, tid, "Write a report about otters", context={"model_name": "demo"})
    names = [m["name"] for m in out["messages"] if m["type"] == "tool"]
    assert names == ["write_file", "bash", "present_files"]
    assert out["artifacts"] == [f"{OUT}/otters-report.md"]
    assert out["messages"][-1]["content"].startswith("Done.")
    async with srv.ahttp() as http:
        r = await http.get(f"{srv.url}/api/threads/{tid}/artifacts/outputs/otters-report.md")
    assert r.status_code == 200 and "otters" in r.text


async def test_openai_429_is_retried(srv: InProcessServer, fake: FakeOpenAIServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    before = len(fake.requests)
    fake.queue(Reply.error(429), Reply.text("hello after retry"))
    out = await _run(client, tid, "hi", context={"model_name": "oa"})
    assert out["messages"][-1]["content"] == "hello after retry"
    assert not out["messages"][-1].get("additional_kwargs", {}).get("error_fallback")
    assert len(fake.requests) - before == 3  # 429, success, title (not streamed)
    assert out["title"] == "A Short Title"


async def test_openai_401_becomes_error_fallback(srv: InProcessServer, fake: FakeOpenAIServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    fake.queue(Reply.error(401, "Incorrect API key provided"))
    out = await _run(client, tid, "hi", context={"model_name": "oa"})
    last = out["messages"][-1]
    fb = last["additional_kwargs"]["error_fallback"]
    assert fb["reason"] == "auth" and fb["error_type"].endswith("AuthenticationError")
    assert "authentication" in last["content"]
    run = (await client.runs.list(tid))[0]
    assert run["status"] == "success"


async def test_unknown_model_is_400(srv: InProcessServer):
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    async with srv.ahttp() as http:
        r = await http.post(
            f"{srv.api}/threads/{tid}/runs",
            json={
                "assistant_id": "lead_agent",
                "input": _human("x"),
                "context": {"model_name": "nope"},
            },
        )
    assert r.status_code == 400 and "nope" in r.json()["detail"]
