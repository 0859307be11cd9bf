"""`/api/memory` on the real app (in process, SQLite store): CRUD, export/import, clear,
status, validation, and isolation between users; and memory end to end through runs — a
fact learned in one thread is in the next thread's prompt."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakes.openai_server import FakeOpenAIServer, Reply
from isolation.appkit import App, KeyAuth
from pronghorn.auth.authorizer import AllowAll
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.gateway.app import create_app
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from support.inproc import Lifespan
from support.live import base_config

FACT_JSON = json.dumps(
    {
        "summaries": {"work_context": "Runs the platform team at Acme."},
        "new_facts": [
            {
                "content": "Wants answers as bullet lists",
                "category": "preference",
                "confidence": 0.95,
            }
        ],
    }
)


@contextlib.asynccontextmanager
async def running(tmp_path: Path, **overrides: Any) -> AsyncIterator[App]:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(base_config(**overrides)), encoding="utf-8")
    app = create_app(ConfigHolder(load_config(path, {})), base_dir=tmp_path)
    lifespan = Lifespan(app)  # its own task (the MCP endpoint's task group)
    await lifespan.startup()
    try:
        runtime: AppRuntime = app.state.runtime
        runtime.authenticator = KeyAuth()
        runtime.authorizer = AllowAll()
        yield App(app, runtime, runtime.data_dir)
    finally:
        await lifespan.shutdown()


ON = {"memory": {"enabled": True}}


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    async with running(tmp_path, **ON) as started:
        yield started


async def test_crud_export_import_clear(app: App) -> None:
    async with app.http("alice") as http:
        empty = (await http.get("/api/memory")).json()
        assert empty["facts"] == [] and empty["revision"] == 0
        assert set(empty["user"]) == {"workContext", "personalContext", "topOfMind"}
        assert set(empty["history"]) == {"recentMonths", "earlierContext", "longTermBackground"}

        r = await http.post("/api/memory/facts", json={"content": "  Likes   green tea "})
        assert r.status_code == 201
        (fact,) = r.json()["facts"]  # every change answers the whole memory
        assert fact["content"] == "Likes green tea" and fact["category"] == "context"
        assert fact["confidence"] == 0.9 and fact["createdAt"] and fact["id"].startswith("fact_")
        r = await http.post(
            "/api/memory/facts",
            json={"content": "Is a vegetarian", "category": "constraint", "confidence": 1},
        )
        second = r.json()["facts"][1]

        r = await http.patch(
            f"/api/memory/facts/{fact['id']}",
            json={"content": "Likes oolong tea", "category": "preference"},
        )
        edited = r.json()["facts"][0]
        assert r.status_code == 200 and edited["content"] == "Likes oolong tea"
        assert edited["category"] == "preference" and edited["createdAt"] == fact["createdAt"]

        doc = (await http.get("/api/memory")).json()
        assert [f["content"] for f in doc["facts"]] == ["Likes oolong tea", "Is a vegetarian"]
        assert doc["revision"] == 3

        export = await http.get("/api/memory/export")
        assert "attachment" in export.headers["content-disposition"]
        saved = export.json()

        r = await http.delete(f"/api/memory/facts/{second['id']}")
        assert r.status_code == 200 and len(r.json()["facts"]) == 1
        assert (await http.delete(f"/api/memory/facts/{second['id']}")).status_code == 404
        r = await http.delete("/api/memory")
        assert r.status_code == 200 and r.json()["facts"] == []
        assert (await http.get("/api/memory")).json()["facts"] == []

        r = await http.post("/api/memory/import", json=saved)
        assert r.status_code == 200
        restored = (await http.get("/api/memory")).json()
        assert [f["id"] for f in restored["facts"]] == [fact["id"], second["id"]]

        status = (await http.get("/api/memory/status")).json()
        assert status["enabled"] is True and status["mode"] == "middleware"
        assert status["queue_depth"] == 0 and status["last_error"] is None
        assert status["config"]["max_injection_tokens"] == 2000


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("post", "/api/memory/facts", {"content": ""}, 422),
        ("post", "/api/memory/facts", {"content": "   "}, 422),
        ("post", "/api/memory/facts", {"content": "x", "category": "nonsense"}, 422),
        ("post", "/api/memory/facts", {"content": "x", "confidence": 2}, 422),
        ("post", "/api/memory/facts", {"content": "x", "extra": 1}, 422),
        ("post", "/api/memory/facts", {"content": "x" * 1001}, 422),
        ("patch", "/api/memory/facts/fact_missing", {"content": "y"}, 404),
        ("patch", "/api/memory/facts/fact_missing", {"confidence": -1}, 422),
        ("post", "/api/memory/import", {"facts": [{"content": "x", "category": "bad"}]}, 422),
        ("post", "/api/memory/import", {"facts": "nope"}, 422),
        ("post", "/api/memory/import", {"version": 9, "facts": []}, 422),
        ("post", "/api/memory/import", {"summaries": {"mood": {"summary": "x"}}}, 422),
        ("post", "/api/memory/import", {"facts": [{"content": "x" * 1001}]}, 422),
        (
            "post",
            "/api/memory/import",
            {"summaries": {"current_focus": {"summary": "x" * 1501}}},
            422,
        ),
        ("get", "/api/memory?agent_name=Not_Valid", None, 400),
    ],
)
async def test_bad_input_is_a_clear_4xx_and_writes_nothing(
    app: App, method: str, path: str, body: Any, status: int
) -> None:
    async with app.http("alice") as http:
        await http.post("/api/memory/facts", json={"content": "Keeps this fact"})
        kwargs = {"json": body} if body is not None else {}
        r = await getattr(http, method)(path, **kwargs)
        assert r.status_code == status, r.text
        assert isinstance(r.json()["detail"], str | list)
        doc = (await http.get("/api/memory")).json()
    assert [f["content"] for f in doc["facts"]] == ["Keeps this fact"]


async def test_duplicate_fact_is_refused(app: App) -> None:
    async with app.http("alice") as http:
        await http.post("/api/memory/facts", json={"content": "Likes tea"})
        r = await http.post("/api/memory/facts", json={"content": "likes TEA."})
    assert r.status_code == 422 and "already" in r.json()["detail"]


async def test_each_user_sees_only_their_own_memory(app: App) -> None:
    async with app.http("alice") as alice, app.http("bob") as bob, app.http("admin") as admin:
        added = await alice.post("/api/memory/facts", json={"content": "Alice's secret"})
        (fact,) = added.json()["facts"]
        await alice.post(
            "/api/memory/facts?agent_name=writer", json={"content": "Writer-only fact"}
        )
        assert (await bob.get("/api/memory")).json()["facts"] == []
        assert (await bob.get("/api/memory/export")).json()["facts"] == []
        assert (
            await bob.patch(f"/api/memory/facts/{fact['id']}", json={"content": "x"})
        ).status_code == 404
        assert (await bob.delete(f"/api/memory/facts/{fact['id']}")).status_code == 404
        assert (await bob.delete("/api/memory")).status_code == 200  # clears bob's only
        # an admin asking for everyone's still gets their own memory here
        everyone = await admin.get("/api/memory", headers={"x-pronghorn-all-users": "true"})
        assert everyone.json()["facts"] == []
        # the store API never reaches memory, not even an admin listing every namespace
        spaces = await admin.post(
            "/api/langgraph/store/namespaces", json={}, headers={"x-pronghorn-all-users": "true"}
        )
        listed = (await alice.post("/api/langgraph/store/items/search", json={})).json()
        mine = (await alice.get("/api/memory")).json()
        writer = (await alice.get("/api/memory?agent_name=writer")).json()
    assert [f["content"] for f in mine["facts"]] == ["Alice's secret"]
    assert [f["content"] for f in writer["facts"]] == ["Writer-only fact"]
    assert listed["items"] == []
    assert spaces.status_code == 200  # admins see raw namespaces (documented), users never


async def test_a_fact_learned_in_one_thread_is_in_the_next_threads_prompt(
    tmp_path: Path, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.default = Reply.text("Sure.")
    models = [
        {"name": "s", "provider": "scripted", "script": [{"text": "Got it, bullets from now on."}]},
        {
            "name": "mem",
            "provider": "scripted",
            "rules": [{"steps": [{"text": f"```json\n{FACT_JSON}\n```"}]}],
        },
        {
            "name": "oa",
            "provider": "openai",
            "model": "gpt-test",
            "base_url": fake_openai.base_url,
            "api_key": "sk-test",
            "max_retries": 0,
        },
    ]
    async with running(
        tmp_path,
        models=models,
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        memory={"enabled": True, "model": "mem", "debounce_s": 3600},
    ) as started:
        sdk = started.sdk("alice")
        t1 = (await sdk.threads.create())["thread_id"]
        human: dict[str, Any] = {
            "messages": [{"role": "human", "content": "Always answer in bullet lists."}]
        }
        await sdk.runs.wait(t1, "lead_agent", input=human)
        async with started.http("alice") as http:
            queued = (await http.get("/api/memory/status")).json()
            assert queued["queue_depth"] == 1 and queued["queued_for_user"] == 1
            await started.runtime.memory.flush()
            doc = (await http.get("/api/memory")).json()
            status = (await http.get("/api/memory/status")).json()
        assert [f["content"] for f in doc["facts"]] == ["Wants answers as bullet lists"]
        assert doc["facts"][0]["source"] == t1
        assert doc["user"]["workContext"]["summary"] == "Runs the platform team at Acme."
        assert status["last_update_at"] and status["processed"] == 1

        t2 = (await sdk.threads.create())["thread_id"]
        ask: dict[str, Any] = {"messages": [{"role": "human", "content": "List three fruits."}]}
        await sdk.runs.wait(t2, "lead_agent", input=ask, context={"model_name": "oa"})
        bob = started.sdk("bob")
        t3 = (await bob.threads.create())["thread_id"]
        await bob.runs.wait(t3, "lead_agent", input=ask, context={"model_name": "oa"})
        await sdk.http.client.aclose()
        await bob.http.client.aclose()
    chats = [r.body for r in fake_openai.requests if r.body.get("tools")]
    alice_sys, bob_sys = (c["messages"][0]["content"] for c in chats[:2])
    assert "Wants answers as bullet lists" in alice_sys and "Runs the platform team" in alice_sys
    assert "<memory>" not in bob_sys


async def test_the_demo_model_skips_updates_quietly(tmp_path: Path) -> None:
    async with running(tmp_path, memory={"enabled": True, "debounce_s": 3600}) as started:
        sdk = started.sdk("alice")
        tid = (await sdk.threads.create())["thread_id"]
        human: dict[str, Any] = {"messages": [{"role": "human", "content": "hello there"}]}
        await sdk.runs.wait(tid, "lead_agent", input=human, context={"model_name": "demo"})
        await sdk.http.client.aclose()
        await started.runtime.memory.flush()
        async with started.http("alice") as http:
            status = (await http.get("/api/memory/status")).json()
    assert status["skipped"] == 1 and status["last_error"] is None and status["processed"] == 0


async def test_disabled_memory_still_lets_users_see_and_clear_it(tmp_path: Path) -> None:
    async with (
        running(tmp_path, memory={"enabled": False}) as started,
        started.http("alice") as http,
    ):
        assert (await http.post("/api/memory/facts", json={"content": "x"})).status_code == 201
        status = (await http.get("/api/memory/status")).json()
        assert status["enabled"] is False
        assert (await http.delete("/api/memory")).status_code == 200
