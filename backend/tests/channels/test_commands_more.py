"""`/memory`, `/<skill> task` and the help listing skills, end to end on the Telegram fake
with a real gateway in-process and the scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.kit import (
    OK,
    OUT,
    call,
    final_text,
    gateway,
    scripted_config,
    serving,
    telegram_section,
    telegram_state,
)
from fakes.telegram_server import FakeTelegram
from skills.kit import skill_md, write_skill
from support.inproc import InProcessServer

RULES = [
    {
        "match": "write it",
        "steps": [
            call("write_file", description="w", path=f"{OUT}/s.txt", content="S"),
            {"text": "Done writing."},
        ],
    },
    OK,
]


def config(fake: FakeTelegram, skills_dir: Path, **extra: Any) -> dict[str, Any]:
    return scripted_config(
        RULES,
        skills={"public_path": str(skills_dir)},
        memory={"enabled": True, "mode": "tool"},  # tool mode: no background updates
        channels={"access": {"mode": "open"}, "telegram": telegram_section(fake)},
        **extra,
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    yield from serving(FakeTelegram())


@pytest.fixture(scope="module")
def skills_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("skills")
    write_skill(
        root,
        "careful-reader",
        skill_md("careful-reader", "Reads files, never writes.", "allowed-tools: [read_file]\n"),
    )
    return root


@pytest.fixture(scope="module")
def srv(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeTelegram, skills_dir: Path
) -> Iterator[InProcessServer]:
    yield from gateway(tmp_path_factory.mktemp("tg-cmd"), config(fake, skills_dir))


_users = iter(range(20_000, 30_000))


def messages_of(srv: InProcessServer, user: int) -> list[dict[str, Any]]:
    return telegram_state(srv, user)["values"]["messages"]


def test_help_lists_the_skills(srv: InProcessServer, fake: FakeTelegram):
    user = next(_users)
    fake.user_message("/help", user_id=user)
    text = final_text(fake, user, "Skills")
    assert "/careful-reader TASK — Reads files, never writes." in text
    assert "/memory" in text


def test_skill_command_runs_the_task_with_the_skill(srv: InProcessServer, fake: FakeTelegram):
    user = next(_users)
    fake.user_message("/careful-reader@pronghorn_bot write it down", user_id=user)
    final_text(fake, user, "Done writing.")
    messages = messages_of(srv, user)
    human = [m for m in messages if m["type"] == "human"]
    assert human[-1]["content"] == "/careful-reader write it down"  # as the web UI asks
    (tool,) = [m for m in messages if m["type"] == "tool"]
    assert "careful-reader skill is active" in tool["content"]  # the skill was activated
    assert not list((srv.workdir / "data").rglob("s.txt"))

    other = next(_users)  # the same task without the skill writes the file
    fake.user_message("please write it down", user_id=other)
    final_text(fake, other, "Done writing.")
    (tool,) = [m for m in messages_of(srv, other) if m["type"] == "tool"]
    assert "skill is active" not in tool["content"]


def test_skill_without_a_task_and_unknown_slash_words(srv: InProcessServer, fake: FakeTelegram):
    user = next(_users)
    fake.user_message("/careful-reader", user_id=user)
    assert "Usage: /careful-reader TASK" in final_text(fake, user, "Usage")
    fake.user_message("/no-such-skill hello", user_id=user)  # plain text for the agent
    final_text(fake, user, "ok")
    human = [m for m in messages_of(srv, user) if m["type"] == "human"]
    assert [m["content"] for m in human] == ["/no-such-skill hello"]


def test_memory_shows_the_users_memory(srv: InProcessServer, fake: FakeTelegram):
    user = next(_users)
    fake.user_message("/memory", user_id=user)
    assert "do not remember anything" in final_text(fake, user, "remember")
    document = {
        "summaries": {
            "work_context": {"summary": "Builds <b>gateways</b> in Python."},
            "current_focus": {"summary": "Chat channels."},
        },
        "facts": [
            {"content": "Prefers short answers.", "confidence": 0.95},
            {"content": "Lives in Lisbon.", "confidence": 0.7},
        ],
    }
    with srv.http() as http:
        assert http.post("/api/memory/import", json=document).status_code == 200
    fake.user_message("/memory", user_id=user)
    text = final_text(fake, user, "What I remember")
    assert "<b>Work</b>: Builds &lt;b&gt;gateways&lt;/b&gt; in Python." in text  # escaped
    assert "<b>Current focus</b>: Chat channels." in text and "Personal" not in text
    assert text.index("Prefers short answers.") < text.index("Lives in Lisbon.")
    assert "<b>Facts</b> (2):" in text


async def test_memory_of_an_unbound_chat_user_gets_the_bind_hint(tmp_path: Path, skills_dir: Path):
    # auth on, access open: an unbound chat user runs as a guest, who has no memory to show
    fake = FakeTelegram().start()
    server = InProcessServer(tmp_path, config(fake, skills_dir, auth={"mode": "local"}))
    try:
        server.start(timeout=120)
        fake.user_message("/memory", user_id=7)
        assert "/connect CODE" in final_text(fake, 7, "/connect")
    finally:
        server.stop()
        fake.stop()
