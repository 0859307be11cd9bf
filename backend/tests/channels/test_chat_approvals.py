"""Tool approvals asked in the chat, end to end on the Telegram fake: the scripted model calls
an approval-gated tool, the bot asks (masked, truncated), and the user's next message
approves (the tool runs) or denies (the model gets the refusal)."""

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
from support.inproc import InProcessServer

SECRET = "sk-live-abcdef1234567890"
CONTENT = f"Authorization: Bearer {SECRET}\n" + "filler " * 100


def _write(name: str) -> dict[str, Any]:
    return call("write_file", description="save", path=f"{OUT}/{name}", content=CONTENT)


RULES = [
    {"match": "save one", "steps": [_write("one.txt"), {"text": "Finished the first."}]},
    {"match": "save two", "steps": [_write("two.txt"), {"text": "Finished the second."}]},
    {"match": "save three", "steps": [_write("three.txt"), {"text": "Finished the third."}]},
    OK,
]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    yield from serving(FakeTelegram())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeTelegram) -> Iterator[InProcessServer]:
    telegram = telegram_section(fake, retry_max_s=60.0)  # the schema's default cap
    cfg = scripted_config(
        RULES,
        approvals={"tools": ["write_file"]},
        channels={"access": {"mode": "open"}, "telegram": telegram},
    )
    yield from gateway(tmp_path_factory.mktemp("tg-approvals"), cfg)


_users = iter(range(30_000, 40_000))


def written(srv: InProcessServer, name: str) -> list[Any]:
    return list((srv.workdir / "data").rglob(name))


def test_approve_runs_the_tool(srv: InProcessServer, fake: FakeTelegram):
    user = next(_users)
    fake.user_message("please save one", user_id=user)
    question = final_text(fake, user, "wants to run")
    assert "<b>write_file</b>" in question and f"{OUT}/one.txt" in question
    assert SECRET not in question and "Bearer ****" in question  # masked
    assert len(question) < 1000 and "…" in question  # the long content is cut
    assert "approve" in question and "deny" in question
    assert not written(srv, "one.txt")  # nothing ran yet
    fake.user_message("approve", user_id=user)
    final_text(fake, user, "Finished the first.")
    (path,) = written(srv, "one.txt")
    assert path.read_text() == CONTENT
    tool = [m for m in telegram_state(srv, user)["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["status"] != "error"


def test_deny_with_a_reason_returns_the_refusal_to_the_model(
    srv: InProcessServer, fake: FakeTelegram
):
    user = next(_users)
    fake.user_message("please save two", user_id=user)
    final_text(fake, user, "wants to run")
    fake.user_message("maybe later?", user_id=user)  # not an answer: asked again, no run
    assert "Reply <b>approve</b>" in final_text(fake, user, "Reply <b>approve</b>")
    assert telegram_state(srv, user)["interrupts"] or telegram_state(srv, user)["tasks"]
    fake.user_message("deny not in that folder", user_id=user)
    final_text(fake, user, "Finished the second.")
    assert not written(srv, "two.txt")
    state = telegram_state(srv, user)
    tool = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["status"] == "error"
    assert "did not approve this write_file call: not in that folder" in tool[-1]["content"]
    assert not state.get("interrupts")


def test_no_denies_without_a_reason(srv: InProcessServer, fake: FakeTelegram):
    user = next(_users)
    fake.user_message("please save three", user_id=user)
    final_text(fake, user, "wants to run")
    fake.user_message("No", user_id=user)
    final_text(fake, user, "Finished the third.")
    assert not written(srv, "three.txt")
    tool = [m for m in telegram_state(srv, user)["values"]["messages"] if m["type"] == "tool"]
    assert "did not approve this write_file call. It was not run." in tool[-1]["content"]


def edited(fake: FakeTelegram, chat: int) -> list[str]:
    """The final texts of the bot's messages in `chat` (their last edit)."""
    last: dict[str, str] = {}
    for c in fake.calls:
        if c.method == "editMessageText" and int(c.body["chat_id"]) == chat:
            last[str(c.body["message_id"])] = str(c.body["text"])
    return list(last.values())


def test_timed_out_approval_is_told_and_the_resumed_answer_reaches_the_chat(tmp_path: Path):
    fake = FakeTelegram().start()  # a bot of its own: the module's gateway polls the other
    cfg = scripted_config(
        RULES,
        approvals={"tools": ["write_file"], "timeout_s": 1, "sweep_interval_s": 0.2},
        channels={"access": {"mode": "open"}, "telegram": telegram_section(fake)},
    )
    server = InProcessServer(tmp_path, cfg).start(timeout=120)
    try:
        user = next(_users)
        fake.user_message("please save one", user_id=user)
        final_text(fake, user, "wants to run")  # nobody answers
        final_text(fake, user, "Nobody answered in time")
        final_text(fake, user, "Finished the first.")  # the sweeper's run, followed in chat
        assert not written(server, "one.txt")
        tool = [
            m for m in telegram_state(server, user)["values"]["messages"] if m["type"] == "tool"
        ]
        assert "approval timed out" in tool[-1]["content"]
        fake.user_message("please save two", user_id=user)  # the chat carries on
        fake.wait_for(lambda: sum("wants to run" in t for t in edited(fake, user)) >= 2)
        fake.user_message("approve", user_id=user)
        final_text(fake, user, "Finished the second.")
        assert not [t for t in fake.sent_texts(user) if "Nobody answered" in t][1:]
    finally:
        server.stop()
        fake.stop()
