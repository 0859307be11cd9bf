"""Telegram end to end: a fake Bot API on loopback, a real gateway in-process with the
scripted model, the channel long-polling the fake."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.kit import (
    BUSY_GATE,
    HELLO_RULE,
    HOLD_TOOLS,
    OK,
    TAIL_RULES,
    final_text,
    gateway,
    held_rule,
    long_text,
    scripted_config,
    serving,
    telegram_section,
    telegram_threads,
    thread_state,
)
from fakes.telegram_server import TOKEN, FakeTelegram
from support import documents
from support.inproc import InProcessServer

LONG = long_text(20, 20)
RULES = [HELLO_RULE, {"match": "long", "steps": [{"text": LONG}]}, *TAIL_RULES, OK]


def config(fake: FakeTelegram, **telegram: Any) -> dict[str, Any]:
    return scripted_config(
        [held_rule(fake), *RULES],
        tools=HOLD_TOOLS,
        channels={"access": {"mode": "open"}, "telegram": telegram_section(fake, **telegram)},
        uploads={"convert": {"timeout_s": 300}},  # generous: a loaded test machine
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    yield from serving(FakeTelegram())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeTelegram) -> Iterator[InProcessServer]:
    yield from gateway(tmp_path_factory.mktemp("tg"), config(fake))


_users = iter(range(100, 10_000))


def new_user() -> int:
    return next(_users)


def thread_of(srv: InProcessServer, user: int) -> dict[str, Any]:
    mine = telegram_threads(srv, user)
    assert mine, mine
    return mine[0]


def test_reply_streams_by_edits_and_ends_right(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    fake.user_message("hello bot", user_id=user)
    final_text(fake, user, "How can I help you today with your question?")
    sent = [c for c in fake.of("sendMessage") if int(c.body["chat_id"]) == user]
    edits = [c for c in fake.of("editMessageText") if int(c.body["chat_id"]) == user]
    assert len(sent) == 1 and sent[0].body["text"] == "…"  # one message, edited in place
    assert len(edits) >= 2  # partial answers, then the final one
    assert all(e.body["message_id"] == edits[0].body["message_id"] for e in edits)
    assert edits[-1].body["text"] == (
        "Hello there, <b>friend</b>! How can I help you today with your question?"
    )
    assert edits[-1].body["parse_mode"] == "HTML"
    assert any(e.body["text"].endswith(" …") for e in edits[:-1])  # a streamed preview


def test_long_reply_is_split(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    fake.user_message("a long one please", user_id=user)
    final_text(fake, user, "Paragraph 19")
    texts = [c.body["text"] for c in fake.of("sendMessage") if int(c.body["chat_id"]) == user]
    finals = [c.body["text"] for c in fake.of("editMessageText") if int(c.body["chat_id"]) == user]
    pieces = [finals[-1], *texts[1:]]
    assert len(pieces) >= 3 and all(len(p) <= 4096 for p in pieces)
    assert "".join(pieces).replace("\n", "").replace(" ", "") == LONG.replace("\n", "").replace(
        " ", ""
    )


def test_artifact_arrives_as_a_file(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    fake.user_message("present a report", user_id=user)
    doc = fake.wait_for(
        lambda: [c for c in fake.of("sendDocument") if int(c.body["chat_id"]) == user]
    )[0]
    assert doc.files["document"] == ("report.md", b"# Report\n")
    assert "Here is your report." in final_text(fake, user, "Here is your report.")


def test_inbound_file_lands_in_uploads(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    fake.user_message("hello, see the file", user_id=user, document=("notes.txt", b"some notes"))
    final_text(fake, user, "How can I help")
    thread = thread_of(srv, user)
    with srv.http() as http:
        files = http.get(f"/api/threads/{thread['thread_id']}/uploads").json()
    names = [f["name"] for f in (files["files"] if isinstance(files, dict) else files)]
    assert "notes.txt" in names
    (stored,) = [
        p for p in (srv.workdir / "data").rglob("notes.txt") if thread["thread_id"] in str(p)
    ]
    assert stored.read_bytes() == b"some notes" and stored.parent.name == "uploads"


def test_inbound_documents_get_markdown_copies_or_a_clear_error(
    srv: InProcessServer, fake: FakeTelegram
):
    user = new_user()
    fake.user_message("hello, a broken one", user_id=user, document=("broken.docx", b"PK junk"))
    said = final_text(fake, user, "Received broken.docx, but could not read it")
    assert "not a readable document" in said
    final_text(fake, user, "How can I help")  # the turn still ran
    fake.user_message("hello, the plan", user_id=user, document=("plan.docx", PLAN))
    thread = thread_of(srv, user)

    def copy() -> Path | None:
        found = [
            p for p in (srv.workdir / "data").rglob("plan.docx.md") if thread["thread_id"] in str(p)
        ]
        return found[0] if found else None

    fake.wait_for(lambda: copy() is not None and fake.of("sendMessage"), timeout=600)
    stored = copy()
    assert stored is not None and "Pronghorns run at 88 km/h" in stored.read_text()
    assert (stored.parent / "broken.docx").exists()  # the bad one was still received


PLAN = documents.docx("Pronghorns run at 88 km/h.")


def test_new_starts_a_new_thread(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    fake.user_message("hello one", user_id=user)
    final_text(fake, user, "How can I help")
    first = thread_of(srv, user)["thread_id"]
    fake.user_message("/new", user_id=user)
    reply = final_text(fake, user, "New conversation started")
    assert first not in reply
    second = reply.split("(")[1].rstrip(").")
    fake.user_message("/status", user_id=user)
    assert second in final_text(fake, user, "Conversation ")


def test_clarification_round_trip(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    fake.user_message("ask me something", user_id=user)
    question = final_text(fake, user, "Which format?")
    assert "1. Short" in question and "2. Long" in question
    fake.user_message("2", user_id=user)
    final_text(fake, user, "Thanks, that settles it.")
    thread = thread_of(srv, user)
    state = thread_state(srv, thread["thread_id"])
    tool = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["content"] == "Long"


def test_busy_thread_queues(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    fake.user_message("slow answer", user_id=user)
    fake.wait_for(lambda: [c for c in fake.of("editMessageText") if int(c.body["chat_id"]) == user])
    fake.user_message("second question", user_id=user)
    final_text(fake, user, "Queued")  # while the first run is held in flight
    fake.release(BUSY_GATE)
    final_text(fake, user, "Done, at last.")
    final_text(fake, user, "The second answer.")
    assert fake.sent_texts(user).index(next(t for t in fake.sent_texts(user) if "Queued" in t)) >= 1


def test_redelivery_runs_once(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    update = fake.user_message("hello twice", user_id=user, message_id=777_000 + user)
    fake.redeliver(update)
    final_text(fake, user, "How can I help")
    fake.user_message("/status", user_id=user)
    final_text(fake, user, "Conversation ")
    thread = thread_of(srv, user)
    with srv.http() as http:
        runs = http.get(f"{srv.api}/threads/{thread['thread_id']}/runs").json()
    assert len(runs) == 1


def test_bots_are_ignored_and_commands_answer(srv: InProcessServer, fake: FakeTelegram):
    user = new_user()
    fake.user_message("hello from a bot", user_id=user, is_bot=True)
    fake.user_message("/models", user_id=user)
    assert "- s (default)" in final_text(fake, user, "Models:")
    fake.user_message("/model nope", user_id=user)
    assert "Unknown model" in final_text(fake, user, "Unknown model")
    fake.user_message("/help", user_id=user)
    final_text(fake, user, "/new")
    assert not any("How can I help" in t for t in fake.sent_texts(user))
    assert all("hello from a bot" not in str(c.body) for c in fake.of("editMessageText"))


def test_group_message_without_mention_is_ignored(srv: InProcessServer, fake: FakeTelegram):
    group = -5000
    fake.user_message("hello group", user_id=new_user(), chat_id=group, chat_type="supergroup")
    fake.user_message(
        "@pronghorn_bot hello there", user_id=new_user(), chat_id=group, chat_type="supergroup"
    )
    final_text(fake, group, "How can I help")
    sent = [c for c in fake.of("sendMessage") if int(c.body["chat_id"]) == group]
    assert len(sent) == 1  # only the mention was answered


def test_status_api(srv: InProcessServer, fake: FakeTelegram):
    with srv.http() as http:
        status = http.get("/api/channels").json()
        providers = http.get("/api/channels/providers").json()["providers"]
    (tg,) = status
    enabled = {p["provider"] for p in providers if p["enabled"] and p["connectable"]}
    assert enabled == {"telegram"}  # DeerFlow's view of the same config
    assert tg["name"] == "telegram" and tg["running"] is True
    assert tg["config"]["bot_token"] == "**********"
    assert TOKEN not in str(status)
    assert tg["counts"]["received"] >= 1


async def test_platform_down_retries_and_gateway_stays_up(tmp_path: Path):
    fake = FakeTelegram().start()
    fake.down = True
    server = InProcessServer(tmp_path, config(fake)).start(timeout=120)
    try:
        await asyncio.to_thread(lambda: _wait_status(server, lambda s: s["counts"]["errors"] >= 3))
        with server.http() as http:
            assert http.get("/health").status_code == 200
            (tg,) = http.get("/api/channels").json()
        assert "502" in tg["last_error"] and TOKEN not in tg["last_error"]
        assert "telegram polling failed" in server.logs()
        fake.down = False
        fake.user_message("hello again", user_id=4242)
        final_text(fake, 4242, "How can I help")
    finally:
        server.stop()
        fake.stop()


def _wait_status(server: InProcessServer, check: Any, timeout: float = 60) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + timeout
    with server.http() as http:
        while time.monotonic() < deadline:
            (tg,) = http.get("/api/channels").json()
            if tg.get("counts") and check(tg):
                return tg
            time.sleep(0.1)
    raise AssertionError("status never matched")
