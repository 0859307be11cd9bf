"""Custom agents as sub-agent types: found by `context.agent_name` among the assistants the
run's owner may use (their own and shared system ones), never another user's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pronghorn.persistence.db import Database, default_sqlite_url
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.repos.assistants import insert_assistant
from pronghorn.runtime.services.agent_directory import AssistantAgentDirectory


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(default_sqlite_url(tmp_path))
    await database.connect()
    await upgrade(database)
    yield database
    await database.close()


async def _add(
    db: Database, aid: str, owner: str | None, context: dict[str, Any], graph: str = "lead_agent"
) -> None:
    await db.write(
        lambda conn: insert_assistant(
            conn,
            assistant_id=aid,
            graph_id=graph,
            config={},
            context=context,
            metadata={},
            name=aid,
            description=f"{aid} description",
            owner_id=owner,
        )
    )


async def test_finds_own_and_shared_agents_only(db: Database):
    await _add(
        db,
        "a1",
        "alice",
        {
            "agent_name": "researcher",
            "system_prompt": "Be terse.",
            "model_name": "m2",
            "tool_groups": ["file", "web"],
            "skills": ["pdf"],
        },
    )
    await _add(db, "b1", "bob", {"agent_name": "secret-agent"})
    await _add(db, "s1", None, {"agent_name": "shared-helper", "description": "for all"})
    await _add(db, "o1", "alice", {"agent_name": "other-graph"}, graph="echo")
    directory = AssistantAgentDirectory(db)

    found = await directory.find("alice", "researcher")
    assert found is not None
    assert (found.name, found.system_prompt, found.model_name) == ("researcher", "Be terse.", "m2")
    assert found.tool_groups == ("file", "web") and found.skills == ("pdf",)
    assert found.description == "a1 description"

    assert await directory.find("alice", "secret-agent") is None  # bob's
    assert await directory.find("bob", "secret-agent") is not None
    shared = await directory.find("alice", "shared-helper")
    assert shared is not None and shared.description == "for all"
    assert await directory.find("alice", "other-graph") is None  # not a lead_agent assistant
    assert await directory.find("alice", "nobody") is None
