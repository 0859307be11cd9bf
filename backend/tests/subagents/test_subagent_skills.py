"""A sub-agent's prompt lists the run user's enabled skills, within its type's `skills`
allow-list (config `subagents.types.<name>.skills`; none given: every enabled skill)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skills.kit import write_skill
from support.inproc import InProcessServer
from support.live import base_config

ECHO = {"name": "echo", "provider": "support.echo_model:PromptEchoModel"}


def _task(kind: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {
                "name": "task",
                "args": {"description": kind, "prompt": "show me", "subagent_type": kind},
            }
        ]
    }


RULES: list[dict[str, Any]] = [
    {"match": "use the picky one", "steps": [_task("picky"), {"text": "done"}]},
    {"match": "use the open one", "steps": [_task("open"), {"text": "done"}]},
    {"match": "use the bare one", "steps": [_task("bare"), {"text": "done"}]},
]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    work = tmp_path_factory.mktemp("subagent-skills")
    public = work / "public-skills"
    write_skill(public, "alpha", "---\nname: alpha\ndescription: The alpha skill.\n---\nA\n")
    write_skill(public, "beta", "---\nname: beta\ndescription: The beta skill.\n---\nB\n")
    kinds = {
        "picky": {"description": "beta only", "model": "echo", "skills": ["beta"]},
        "open": {"description": "every skill", "model": "echo"},
        "bare": {"description": "no skills", "model": "echo", "skills": []},
    }
    cfg = base_config(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}, ECHO],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        skills={"public_path": str(public)},
        subagents={"types": kinds},
    )
    server = InProcessServer(Path(work), cfg).start(timeout=120)
    yield server
    server.stop()


async def _sub_agent_system_prompt(srv: InProcessServer, text: str) -> str:
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    ends = [
        p.data
        async for p in client.runs.stream(
            tid,
            "lead_agent",
            input={"messages": [{"role": "human", "content": text}]},
            context={"subagent_enabled": True},
            stream_mode=["custom"],
        )
        if p.event == "custom" and p.data.get("type") == "task_completed"
    ]
    (end,) = ends
    return json.loads(end["result"])["system"]


async def test_allow_list_picks_the_skills_in_the_prompt(srv: InProcessServer):
    system = await _sub_agent_system_prompt(srv, "use the picky one")
    assert "<name>beta</name>" in system and "/mnt/skills/public/beta/SKILL.md" in system
    assert "<name>alpha</name>" not in system


async def test_no_allow_list_lists_every_enabled_skill(srv: InProcessServer):
    system = await _sub_agent_system_prompt(srv, "use the open one")
    assert "<name>alpha</name>" in system and "<name>beta</name>" in system


async def test_an_empty_allow_list_lists_none(srv: InProcessServer):
    system = await _sub_agent_system_prompt(srv, "use the bare one")
    assert "<skill_system>" not in system
