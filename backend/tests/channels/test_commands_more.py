"""`/memory`, `/<skill> task` and the help listing skills, end to end on the Telegram fake
with a real gateway in-process and the scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.telegram_server import TOKEN, FakeTelegram
from skills.kit import skill_md, write_skill
from support.inproc import InProcessServer
from support.live import base_config

OUT = "/mnt/user-data/outputs"
RULES = [
    {
        "match": "write it",
        "steps": [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "args": {"description": "w", "path": f"{OUT}/s.txt", "content": "S"},
                    }
                ]
            },
            {"text": "Done writing."},
        ],
    },
    {"steps": [{"text": "ok"}]},
]


def config(fake: FakeTelegram, skills_dir: Path, **extra: Any) -> dict[str, Any]:
    return base_config(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        skills={"public_path": str(skills_dir)},
        memory={"enabled": True, "mode": "tool"},  # tool mode: no background updates
        channels={
            "access": {"mode": "open"},
            "telegram": {
                "bot_token": TOKEN,
                "api_base_url": fake.url,
                "poll_timeout_s": 5,
                "edit_interval_s": 0.05,
                "retry_initial_s": 0.05,
                "retry_max_s": 0.2,
            },
        },
        **extra,
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


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
    server = InProcessServer(tmp_path_factory.mktemp("tg-cmd"), config(fake, skills_dir))
    server.start(timeout=120)
    yield server
    server.stop()


_users = iter(range(20_000, 30_000))


def final_text(fake: FakeTelegram, chat: int, contains: str) -> str:
    def check() -> str | None:
        for call in reversed(fake.calls):
            if (
                call.method in ("sendMessage", "editMessageText")
                and int(call.body["chat_id"]) == chat
            ):
                text = str(call.body.get("text", ""))
                if contains in text and not text.endswith(" …"):
                    return text
        return None

    return fake.wait_for(check)


def messages_of(srv: InProcessServer, user: int) -> list[dict[str, Any]]:
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "telegram"}}
        ).json()
        (thread,) = [t for t in threads if t["metadata"].get("chat") == str(user)]
        state = http.get(f"{srv.api}/threads/{thread['thread_id']}/state").json()
    return state["values"]["messages"]


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
