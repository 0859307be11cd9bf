"""Custom agents: an assistant of lead_agent made with the SDK's ``assistants.create`` runs
with its own prompt, model, tools and skills; ``/api/agents`` is a view over the same
records (DeerFlow shapes)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from api.conftest import api_database
from skills.kit import write_skill
from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state

ECHO = {"name": "echo", "provider": "support.echo_model:PromptEchoModel"}
PLAIN = {"name": "plain", "provider": "scripted", "script": [{"text": "plain model"}]}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    work = tmp_path_factory.mktemp("agents")
    public = work / "public-skills"
    write_skill(public, "alpha", "---\nname: alpha\ndescription: The alpha skill.\n---\nA\n")
    write_skill(public, "beta", "---\nname: beta\ndescription: The beta skill.\n---\nB\n")
    with api_database() as overrides:  # PostgreSQL too, with PRONGHORN_TEST_API_POSTGRES=1
        cfg = base_config(
            models=[PLAIN, ECHO],
            agent={"default_model": "plain"},
            sandbox={"isolation": "none"},
            skills={"public_path": str(public)},
            **overrides,
        )
        server = InProcessServer(work, cfg).start(timeout=120)
        yield server
        server.stop()


def _human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


async def _seen(client: Any, assistant_id: str, **kw: Any) -> dict[str, Any]:
    """What the model received in a run of ``assistant_id``."""
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, assistant_id, input=_human("hello"), **kw)
    return json.loads(out["messages"][-1]["content"])


async def test_sdk_created_agent_runs_with_its_own_prompt_model_and_tools(srv: InProcessServer):
    client = srv.sdk()
    agent = await client.assistants.create(
        graph_id="lead_agent",
        name="sql-helper",
        context={
            "agent_name": "sql-helper",
            "description": "Answers with SQL",
            "system_prompt": "You are a terse SQL expert. Answer only with SQL.",
            "model_name": "echo",
            "tool_groups": ["file"],
            "skills": ["beta"],
        },
    )
    seen = await _seen(client, agent["assistant_id"])
    system = seen["system"]
    assert "You are a terse SQL expert. Answer only with SQL." in system
    assert "custom agent 'sql-helper'" in system
    assert set(seen["tools"]) == {
        "read_file",
        "write_file",
        "str_replace",
        "ls",
        "glob",
        "grep",
        "view_image",
    }
    assert "<name>beta</name>" in system and "<name>alpha</name>" not in system
    # The default agent: every tool group and every enabled skill, no persona.
    default = await _seen(client, "lead_agent", context={"model_name": "echo"})
    assert {"bash", "ask_clarification", "web_fetch"} <= set(default["tools"])
    assert "<name>alpha</name>" in default["system"] and "sql-helper" not in default["system"]
    # A new version of the assistant changes the next run (the graph is rebuilt).
    assert isinstance(agent["context"], dict)
    await client.assistants.update(
        agent["assistant_id"],
        context={
            **agent["context"],
            "system_prompt": "Answer in haiku.",
            "tool_groups": ["shell"],
        },
    )
    again = await _seen(client, agent["assistant_id"])
    assert "Answer in haiku." in again["system"] and again["tools"] == ["bash"]
    versions = await client.assistants.get_versions(agent["assistant_id"])
    assert len(versions) == 2


async def test_agents_api_crud(srv: InProcessServer):
    async with srv.ahttp() as http:
        body = {
            "name": "researcher",
            "description": "Finds sources",
            "model": "echo",
            "tool_groups": ["web", "file"],
            "skills": ["alpha"],
            "soul": "Cite everything.",
        }
        r = await http.get("/api/agents/check", params={"name": "researcher"})
        assert r.json() == {"available": True, "name": "researcher"}
        created = await http.post("/api/agents", json=body)
        assert created.status_code == 201, created.text
        agent = created.json()
        assert agent["name"] == "researcher" and agent["soul"] == "Cite everything."
        assert agent["system_prompt"] == "Cite everything." and agent["model"] == "echo"
        assert agent["tool_groups"] == ["web", "file"] and agent["version"] == 1
        assert (await http.post("/api/agents", json=body)).status_code == 409
        r = await http.get("/api/agents/check", params={"name": "researcher"})
        assert r.json()["available"] is False
        names = [a["name"] for a in (await http.get("/api/agents")).json()["agents"]]
        assert "researcher" in names
        # It is an assistant: runnable through the LangGraph API by its id.
        seen = await _seen(srv.sdk(), agent["assistant_id"])
        assert "Cite everything." in seen["system"] and "<name>alpha</name>" in seen["system"]
        assert "web_fetch" in seen["tools"] and "bash" not in seen["tools"]
        # PUT: a new version; given fields replace, null resets to the default.
        r = await http.put(
            "/api/agents/researcher", json={"soul": "Be brief.", "tool_groups": None}
        )
        assert r.status_code == 200, r.text
        updated = r.json()
        assert updated["soul"] == "Be brief." and updated["tool_groups"] is None
        assert updated["skills"] == ["alpha"] and updated["version"] == 2
        got = (await http.get("/api/agents/researcher")).json()
        assert got == updated
        same = await http.put("/api/agents/researcher", json={"name": "researcher"})
        assert same.status_code == 200 and same.json()["version"] == 3
        renamed = await http.put("/api/agents/researcher", json={"name": "other"})
        assert renamed.status_code == 422 and "renamed" in renamed.json()["detail"]
        # Delete, then it is gone.
        assert (await http.delete("/api/agents/researcher")).status_code == 204
        assert (await http.get("/api/agents/researcher")).status_code == 404
        assert (await http.delete("/api/agents/researcher")).status_code == 404
        assert (await http.put("/api/agents/researcher", json={})).status_code == 404


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"name": "Bad Name"}, "Invalid agent name"),
        ({"name": "x" * 65}, "Invalid agent name"),
        ({"name": "ok", "model": "nope"}, "Unknown model"),
        ({"name": "ok", "tool_groups": ["file", "lasers"]}, "Unknown tool groups"),
        ({"name": "ok", "system_prompt": "x" * 20_001}, "longer than"),
    ],
)
async def test_agents_api_rejects_bad_input(srv: InProcessServer, body: dict[str, Any], error: str):
    async with srv.ahttp() as http:
        r = await http.post("/api/agents", json=body)
        assert r.status_code == 422 and error in r.json()["detail"]
        assert (
            await http.post("/api/agents", json={"name": "ok", "colour": "red"})
        ).status_code == 422
        assert (await http.get("/api/agents/check", params={"name": "No"})).status_code == 422
        names = [a["name"] for a in (await http.get("/api/agents")).json()["agents"]]
        assert "ok" not in names  # nothing partially written


async def test_slash_activation_through_a_real_run(srv: InProcessServer):
    client = srv.sdk()

    async def system_for(assistant: str, text: str, **kw: Any) -> str:
        tid = (await client.threads.create())["thread_id"]
        out = await client.runs.wait(tid, assistant, input=_human(text), **kw)
        return json.loads(as_state(out)["messages"][-1]["content"])["system"]

    system = await system_for("lead_agent", "/beta do the thing", context={"model_name": "echo"})
    assert '<active_skill name="beta" location="/mnt/skills/public/beta/SKILL.md">' in system
    assert "\nB\n</active_skill>" in system  # the body
    # An agent whose allow-list leaves beta out cannot activate it.
    agent = await client.assistants.create(
        graph_id="lead_agent",
        context={"agent_name": "only-alpha", "skills": ["alpha"], "model_name": "echo"},
    )
    system = await system_for(agent["assistant_id"], "/beta do the thing")
    assert "<active_skill" not in system and "<name>beta</name>" not in system


async def test_concurrent_creates_of_one_name_make_one_agent(srv: InProcessServer) -> None:
    body = {"name": "twin", "description": "made twice at once"}
    async with srv.ahttp() as http:
        answers = await asyncio.gather(*(http.post("/api/agents", json=body) for _ in range(6)))
        codes = sorted(r.status_code for r in answers)
        assert codes == [201] + [409] * 5, [r.text for r in answers]
        assert all("already exists" in r.json()["detail"] for r in answers if r.status_code == 409)
        agents = (await http.get("/api/agents")).json()["agents"]
        assert [a["name"] for a in agents].count("twin") == 1
