"""Tool approvals asked in the chat, end to end on the Telegram fake: the scripted model calls
an approval-gated tool, the bot asks (masked, truncated), and the user's next message
approves (the tool runs) or denies (the model gets the refusal)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakes.telegram_server import TOKEN, FakeTelegram
from support.inproc import InProcessServer
from support.live import base_config

OUT = "/mnt/user-data/outputs"
SECRET = "sk-live-abcdef1234567890"
CONTENT = f"Authorization: Bearer {SECRET}\n" + "filler " * 100


def _write(name: str) -> dict[str, Any]:
    args = {"description": "save", "path": f"{OUT}/{name}", "content": CONTENT}
    return {"tool_calls": [{"name": "write_file", "args": args}]}


RULES = [
    {"match": "save one", "steps": [_write("one.txt"), {"text": "Finished the first."}]},
    {"match": "save two", "steps": [_write("two.txt"), {"text": "Finished the second."}]},
    {"match": "save three", "steps": [_write("three.txt"), {"text": "Finished the third."}]},
    {"steps": [{"text": "ok"}]},
]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeTelegram) -> Iterator[InProcessServer]:
    cfg = base_config(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        approvals={"tools": ["write_file"]},
        channels={
            "access": {"mode": "open"},
            "telegram": {
                "bot_token": TOKEN,
                "api_base_url": fake.url,
                "poll_timeout_s": 5,
                "edit_interval_s": 0.05,
                "retry_initial_s": 0.05,
            },
        },
    )
    server = InProcessServer(tmp_path_factory.mktemp("tg-approvals"), cfg).start(timeout=120)
    yield server
    server.stop()


_users = iter(range(30_000, 40_000))


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


def state_of(srv: InProcessServer, user: int) -> dict[str, Any]:
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "telegram"}}
        ).json()
        (thread,) = [t for t in threads if t["metadata"].get("chat") == str(user)]
        return http.get(f"{srv.api}/threads/{thread['thread_id']}/state").json()


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
    tool = [m for m in state_of(srv, user)["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["status"] != "error"


def test_deny_with_a_reason_returns_the_refusal_to_the_model(
    srv: InProcessServer, fake: FakeTelegram
):
    user = next(_users)
    fake.user_message("please save two", user_id=user)
    final_text(fake, user, "wants to run")
    fake.user_message("maybe later?", user_id=user)  # not an answer: asked again, no run
    assert "Reply <b>approve</b>" in final_text(fake, user, "Reply <b>approve</b>")
    assert state_of(srv, user)["interrupts"] or state_of(srv, user)["tasks"]
    fake.user_message("deny not in that folder", user_id=user)
    final_text(fake, user, "Finished the second.")
    assert not written(srv, "two.txt")
    state = state_of(srv, user)
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
    tool = [m for m in state_of(srv, user)["values"]["messages"] if m["type"] == "tool"]
    assert "did not approve this write_file call. It was not run." in tool[-1]["content"]
