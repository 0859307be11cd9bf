"""Discord end to end: a fake Discord (gateway WebSocket + REST) on loopback, a real gateway
in-process with the scripted model, the channel connected to the fake's gateway."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi import FastAPI

from channels.kit import (
    BUSY_GATE,
    FAST,
    HELLO,
    HOLD_TOOLS,
    OK,
    TAIL_RULES,
    held_rule,
    long_text,
    scripted_config,
    serving,
    thread_state,
)
from channels.kit import settled_text as final_text
from fakes.discord_server import APP_ID, BOT_ID, GUILD, TOKEN, FakeDiscord
from isolation.appkit import KeyAuth
from pronghorn.auth.authorizer import AllowAll
from pronghorn.channels.discord.channel import INTERACTION_TTL_S, DiscordTransport
from pronghorn.channels.dispatcher import target_of
from pronghorn.channels.types import Inbound
from pronghorn.config.schema.channels import DiscordConfig
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from support.inproc import InProcessServer

DRIP = "Drip by drip the answer arrives, word after word."
LONG = long_text(12, 20)
RULES = [
    {"match": "hello", "steps": [{"text": HELLO, "delay_s": 0.03}]},  # paced: previews show
    {"match": "long", "steps": [{"text": LONG}]},
    *TAIL_RULES,
    {"match": "drip", "steps": [{"text": DRIP, "delay_s": 0.1}]},
    OK,
]


def config(fake: FakeDiscord, access: str = "open", **discord: Any) -> dict[str, Any]:
    section = {"bot_token": TOKEN, "api_base_url": fake.api_base, **FAST, **discord}
    return scripted_config(
        [held_rule(fake), *RULES],
        tools=HOLD_TOOLS,
        channels={"access": {"mode": access}, "discord": section},
    )


def start_server(workdir: Path, fake: FakeDiscord, access: str = "open") -> InProcessServer:
    server = InProcessServer(workdir, config(fake, access)).start(timeout=120)
    fake.wait_for(fake.connected)
    return server


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeDiscord]:
    yield from serving(FakeDiscord())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeDiscord) -> Iterator[InProcessServer]:
    server = start_server(tmp_path_factory.mktemp("discord"), fake)
    yield server
    server.stop()


_users = iter(range(100, 10_000))


def new_user() -> str:
    return str(next(_users))


def calls_in(fake: FakeDiscord, method: str, channel: str) -> list[Any]:
    return [c for c in fake.of(method) if c.body.get("channel_id") == channel]


def threads_of(srv: InProcessServer, chat: str) -> list[dict[str, Any]]:
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "discord"}, "limit": 100}
        ).json()
    return [t for t in threads if t["metadata"].get("chat", "").split("|")[0] == chat]


def thread_of(srv: InProcessServer, chat: str) -> dict[str, Any]:
    mine = threads_of(srv, chat)
    assert len(mine) == 1, mine
    return mine[0]


def test_identify_heartbeats_and_commands(srv: InProcessServer, fake: FakeDiscord):
    identify = fake.op_calls("IDENTIFY")[0].body
    assert identify["token"] == TOKEN
    assert identify["intents"] == (1 << 0) | (1 << 9) | (1 << 12)
    assert set(identify["properties"]) == {"os", "browser", "device"}
    fake.wait_for(lambda: [h for h in fake.op_calls("HEARTBEAT") if h.body["seq"] is not None])
    (register,) = fake.wait_for(lambda: fake.of("registerCommands"))
    assert register.body["where"] == "global"
    names = {c["name"] for c in register.body["commands"]}
    assert {"ask", "new", "status", "models", "model", "connect", "help"} <= names
    ask = next(c for c in register.body["commands"] if c["name"] == "ask")
    assert ask["options"][0] == {
        "type": 3,
        "name": "message",
        "description": "What to ask",
        "required": True,
    }


def test_reply_streams_by_edits_and_ends_right(srv: InProcessServer, fake: FakeDiscord):
    dm = f"dm-{new_user()}"
    fake.message("hello bot", user_id=dm[3:])
    final_text(fake, dm, "How can I help you today with your question?")
    sent = calls_in(fake, "createMessage", dm)
    edits = calls_in(fake, "editMessage", dm)
    assert len(sent) == 1 and sent[0].body["content"] == "…"  # one message, edited in place
    assert sent[0].body["allowed_mentions"] == {"parse": []}  # replies never ping anyone
    assert len(edits) >= 2  # partial answers, then the final one
    assert len({e.body["message_id"] for e in edits}) == 1
    assert edits[-1].body["content"] == HELLO  # Discord speaks Markdown: sent as written
    assert any(e.body["content"].endswith(" …") for e in edits[:-1])  # a streamed preview


def test_long_reply_is_split(srv: InProcessServer, fake: FakeDiscord):
    dm = f"dm-{new_user()}"
    fake.message("a long one please", user_id=dm[3:])
    final_text(fake, dm, "Paragraph 11")
    posted = [c.body["content"] for c in calls_in(fake, "createMessage", dm)]
    final = calls_in(fake, "editMessage", dm)[-1].body["content"]
    pieces = [final, *posted[1:]]
    assert len(pieces) >= 3 and all(len(p) <= 2000 for p in pieces)
    squash = str.maketrans("", "", " \n")
    assert "".join(pieces).translate(squash) == LONG.translate(squash)


def test_artifact_arrives_as_a_file(srv: InProcessServer, fake: FakeDiscord):
    dm = f"dm-{new_user()}"
    fake.message("present a report", user_id=dm[3:])
    upload = fake.wait_for(lambda: [c for c in calls_in(fake, "createMessage", dm) if c.files])[0]
    assert upload.files["files[0]"] == ("report.md", b"# Report\n")
    assert upload.body["attachments"] == [{"id": 0, "filename": "report.md"}]
    assert "Here is your report." in final_text(fake, dm, "Here is your report.")


def test_inbound_file_lands_in_uploads(srv: InProcessServer, fake: FakeDiscord):
    user = new_user()
    fake.message("hello, see the file", user_id=user, attachment=("notes.txt", b"some notes"))
    final_text(fake, f"dm-{user}", "How can I help")
    thread = thread_of(srv, f"dm-{user}")
    with srv.http() as http:
        files = http.get(f"/api/threads/{thread['thread_id']}/uploads").json()
    names = [f["name"] for f in (files["files"] if isinstance(files, dict) else files)]
    assert "notes.txt" in names
    (stored,) = [
        p for p in (srv.workdir / "data").rglob("notes.txt") if thread["thread_id"] in str(p)
    ]
    assert stored.read_bytes() == b"some notes" and stored.parent.name == "uploads"


def test_slash_new_answers_through_the_interaction(srv: InProcessServer, fake: FakeDiscord):
    user = new_user()
    dm = f"dm-{user}"
    fake.message("hello one", user_id=user)
    final_text(fake, dm, "How can I help")
    first = thread_of(srv, dm)["thread_id"]
    new = fake.slash("new", user_id=user)
    reply = final_text(fake, dm, "New conversation started")
    (ack,) = [c for c in fake.of("callback") if c.body["token"] == new["token"]]
    assert ack.body == {"type": 5, "channel_id_of": dm, "token": new["token"]}  # deferred
    (edit,) = [
        c for c in calls_in(fake, "editWebhookMessage", dm) if "New conv" in c.body["content"]
    ]
    assert edit.body["message_id"] == "@original"
    assert first not in reply
    second = reply.split("(")[1].rstrip(").")
    fake.slash("status", user_id=user)
    assert second in final_text(fake, dm, "Conversation ")
    fake.message("/new", user_id=user)  # the typed command works as well
    news = fake.wait_for(lambda: [t for t in fake.texts(dm) if "New conversation started" in t][1:])
    assert second not in news[-1] and len(threads_of(srv, dm)) == 3


def test_slash_ask_streams_by_editing_the_original_response(
    srv: InProcessServer, fake: FakeDiscord
):
    user = new_user()
    dm = f"dm-{user}"
    fake.slash("ask", {"message": "drip via slash"}, user_id=user)
    final_text(fake, dm, "word after word.")
    assert not calls_in(fake, "createMessage", dm)  # all through the interaction
    edits = calls_in(fake, "editWebhookMessage", dm)
    assert edits[0].body["content"] == "…" and len(edits) >= 3
    assert any(e.body["content"].endswith(" …") for e in edits[1:-1])  # streamed previews
    assert {e.body["message_id"] for e in edits} == {"@original"}
    assert edits[-1].body["content"] == DRIP
    thread = thread_of(srv, dm)
    state = thread_state(srv, thread["thread_id"])
    human = [m for m in state["values"]["messages"] if m["type"] == "human"]
    assert human[0]["content"] == "drip via slash"


def test_slash_long_answer_continues_in_follow_ups(srv: InProcessServer, fake: FakeDiscord):
    dm = f"dm-{new_user()}"
    fake.slash("ask", {"message": "long please"}, user_id=dm[3:])
    fake.wait_for(lambda: any("Paragraph 11" in t for t in fake.texts(dm)))
    follow = calls_in(fake, "followup", dm)
    final = [c for c in calls_in(fake, "editWebhookMessage", dm)][-1].body["content"]
    pieces = [final, *(c.body["content"] for c in follow)]
    assert len(follow) >= 2 and all(len(p) <= 2000 for p in pieces)
    squash = str.maketrans("", "", " \n")
    assert "".join(pieces).translate(squash) == LONG.translate(squash)


def test_clarification_round_trip(srv: InProcessServer, fake: FakeDiscord):
    user = new_user()
    dm = f"dm-{user}"
    fake.message("ask me something", user_id=user)
    question = final_text(fake, dm, "Which format?")
    assert "1. Short" in question and "2. Long" in question
    fake.message("2", user_id=user)
    final_text(fake, dm, "Thanks, that settles it.")
    thread = thread_of(srv, dm)
    state = thread_state(srv, thread["thread_id"])
    tool = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["content"] == "Long"


def test_busy_thread_queues(srv: InProcessServer, fake: FakeDiscord):
    user = new_user()
    dm = f"dm-{user}"
    fake.message("slow answer", user_id=user)
    fake.wait_for(lambda: calls_in(fake, "editMessage", dm))
    fake.message("second question", user_id=user)
    final_text(fake, dm, "Queued")  # while the first run is held in flight
    fake.release(BUSY_GATE)
    final_text(fake, dm, "Done, at last.")
    final_text(fake, dm, "The second answer.")
    texts = fake.texts(dm)
    assert texts.index(next(t for t in texts if "Queued" in t)) < texts.index(
        next(t for t in texts if "The second answer." in t)
    )
    with srv.http() as http:
        runs = http.get(f"{srv.api}/threads/{thread_of(srv, dm)['thread_id']}/runs").json()
    assert len(runs) == 2


def test_redelivered_event_runs_once(srv: InProcessServer, fake: FakeDiscord):
    user = new_user()
    dm = f"dm-{user}"
    event = fake.message("hello twice", user_id=user)
    fake.dispatch("MESSAGE_CREATE", event)  # the same message again (as a replay would)
    final_text(fake, dm, "How can I help")
    fake.message("/status", user_id=user)
    final_text(fake, dm, "Conversation ")
    with srv.http() as http:
        runs = http.get(f"{srv.api}/threads/{thread_of(srv, dm)['thread_id']}/runs").json()
    assert len(runs) == 1
    assert len(calls_in(fake, "createMessage", dm)) == 2  # the answer, then the status


def test_guild_mentions_and_discord_threads(srv: InProcessServer, fake: FakeDiscord):
    channel, thread_channel, user = "800000000000000001", "800000000000000002", new_user()
    fake.message("hello all", user_id=user, channel_id=channel, guild_id=GUILD)
    fake.message("hello bot", user_id=user, channel_id=channel, guild_id=GUILD, mention=True)
    final_text(fake, channel, "How can I help")
    assert len(calls_in(fake, "createMessage", channel)) == 1  # only the mention
    fake.message(
        "hello in a thread", user_id=user, channel_id=thread_channel, guild_id=GUILD, mention=True
    )
    final_text(fake, thread_channel, "How can I help")
    a, b = thread_of(srv, channel), thread_of(srv, thread_channel)
    assert a["thread_id"] != b["thread_id"]  # a Discord thread is a conversation of its own
    state = thread_state(srv, a["thread_id"])
    human = [m for m in state["values"]["messages"] if m["type"] == "human"]
    assert human[0]["content"] == "hello bot"  # the mention is not part of the text


def test_bots_and_itself_are_ignored(srv: InProcessServer, fake: FakeDiscord):
    user = new_user()
    dm = f"dm-{user}"
    fake.message("hello from a bot", user_id=user, bot=True)
    fake.message("hello from myself", user_id=BOT_ID, channel_id=dm)
    fake.message("/help", user_id=user)
    final_text(fake, dm, "/new")
    assert len(calls_in(fake, "createMessage", dm)) == 1  # only the help


def test_rate_limit_is_honoured(srv: InProcessServer, fake: FakeDiscord):
    user = new_user()
    dm = f"dm-{user}"
    fake.retry_after_s = 0.15  # more than the first backoff (0.05), within retry_max_s
    fake.rate_limit_next = 1
    fake.message("/models", user_id=user)  # one message out: easy to see its retry
    assert "- s (default)" in final_text(fake, dm, "Models:")
    limited = [t for name, t in fake.times if name == "429"]
    sent = [t for name, t in fake.times if name == "createMessage"]
    assert limited and sent[-1] - limited[-1] >= fake.retry_after_s - 0.01


def test_gateway_drop_resumes_and_carries_on(srv: InProcessServer, fake: FakeDiscord):
    assert fake.session is not None
    session = fake.session
    seq = session.seq
    fake.wait_for(lambda: [h for h in fake.op_calls("HEARTBEAT") if h.body["seq"] == seq])
    identifies = len(fake.op_calls("IDENTIFY"))
    fake.gateway_open = False
    fake.drop(4000)
    fake.wait_for(lambda: not fake.connected())
    user = new_user()
    fake.message("hello after the drop", user_id=user)  # missed: replayed on resume
    fake.gateway_open = True
    resume = fake.wait_for(lambda: fake.op_calls("RESUME"))[-1].body
    assert resume == {"token": TOKEN, "session_id": session.id, "seq": seq}
    final_text(fake, f"dm-{user}", "How can I help")
    assert len(fake.op_calls("IDENTIFY")) == identifies  # the same session carried on
    fake.wait_for(fake.connected)


def test_reconnect_invalid_session_and_zombie(srv: InProcessServer, fake: FakeDiscord):
    fake.wait_for(fake.connected)
    resumes, identifies = len(fake.op_calls("RESUME")), len(fake.op_calls("IDENTIFY"))
    fake.send_op(7)  # RECONNECT: resume
    fake.wait_for(lambda: len(fake.op_calls("RESUME")) > resumes and fake.connected())
    assert len(fake.op_calls("IDENTIFY")) == identifies
    fake.send_op(9, False)  # INVALID_SESSION, not resumable: identify again
    fake.wait_for(lambda: len(fake.op_calls("IDENTIFY")) > identifies and fake.connected())
    assert fake.op_calls("IDENTIFY")[-1].body["token"] == TOKEN
    resumes = len(fake.op_calls("RESUME"))
    fake.ack = False  # heartbeats go unanswered: the bot drops the zombie and resumes
    try:
        fake.wait_for(lambda: len(fake.op_calls("RESUME")) > resumes)
    finally:
        fake.ack = True
    fake.wait_for(fake.connected)
    user = new_user()
    fake.message("hello, still there?", user_id=user)
    final_text(fake, f"dm-{user}", "How can I help")


def test_status_api(srv: InProcessServer, fake: FakeDiscord):
    with srv.http() as http:
        (dc,) = http.get("/api/channels").json()
        providers = http.get("/api/channels/providers").json()["providers"]
    enabled = {p["provider"] for p in providers if p["enabled"] and p["connectable"]}
    assert enabled == {"discord"}  # DeerFlow's view of the same config
    assert dc["name"] == "discord" and dc["running"] is True
    assert dc["config"]["bot_token"] == "**********" and TOKEN not in str(dc)
    assert dc["counts"]["received"] >= 1


def test_bound_user_owns_the_thread_and_unbound_gets_the_hint(tmp_path: Path):
    """Mode bound with two API-key users (isolation.appkit's KeyAuth): alice binds her
    Discord account, and her chat's run and thread are hers, invisible to bob."""
    fake = FakeDiscord().start()
    server = start_server(tmp_path, fake, access="bound")
    runtime: AppRuntime = cast(FastAPI, server.app).state.runtime
    runtime.authenticator = KeyAuth()
    runtime.authorizer = runtime.runs.authorizer = AllowAll()
    try:
        user = new_user()
        dm = f"dm-{user}"
        fake.message("hello", user_id=user)
        assert "/connect CODE" in final_text(fake, dm, "connect")
        with server.http(headers={"x-api-key": "alice"}) as alice:
            code = alice.post("/api/channels/discord/connect").json()
        assert code["command"] == f"/connect {code['code']}"
        connect = fake.slash("connect", {"code": code["code"]}, user_id=user)
        assert "as Alice" in final_text(fake, dm, "Connected")
        (ack,) = [c for c in fake.of("callback") if c.body["token"] == connect["token"]]
        assert ack.body["data"] == {"flags": 64}  # only the user sees the answer
        other = new_user()
        fake.slash("connect", {"code": code["code"]}, user_id=other)  # a code works once
        final_text(fake, f"dm-{other}", "not valid")
        fake.message("hello again", user_id=user)
        final_text(fake, dm, "How can I help")
        search = {"metadata": {"channel": "discord"}}
        with server.http(headers={"x-api-key": "alice"}) as alice:
            (thread,) = alice.post(f"{server.api}/threads/search", json=search).json()
            runs = alice.get(f"{server.api}/threads/{thread['thread_id']}/runs").json()
            conns = alice.get("/api/channels/connections").json()["connections"]
        with server.http(headers={"x-api-key": "bob"}) as bob:
            assert bob.post(f"{server.api}/threads/search", json=search).json() == []
            seen = bob.get(f"{server.api}/threads/{thread['thread_id']}")
        assert seen.status_code == 404
        assert thread["metadata"]["chat"] == dm
        assert len(runs) == 1 and runs[0]["metadata"]["channel"] == "discord"
        (conn,) = [c for c in conns if c["external_id"] == user]
        assert conn["channel"] == "discord" and conn["owner_id"] == "alice"
        assert conn["external_name"] == "alice"
    finally:
        server.stop()
        fake.stop()


async def test_platform_down_retries_and_gateway_stays_up(tmp_path: Path):
    fake = FakeDiscord().start()
    fake.down = True
    server = InProcessServer(tmp_path, config(fake)).start(timeout=120)
    try:
        status = await asyncio.to_thread(
            lambda: _wait_status(server, lambda s: s["counts"]["errors"] >= 3)
        )
        assert "503" in status["last_error"] and TOKEN not in status["last_error"]
        with server.http() as http:
            assert http.get("/health").status_code == 200
        assert "discord gateway failed" in server.logs()
        fake.down = False
        await asyncio.to_thread(fake.wait_for, fake.connected)
        fake.message("hello again", user_id="4242")
        await asyncio.to_thread(final_text, fake, "dm-4242", "How can I help")
    finally:
        server.stop()
        fake.stop()


async def test_a_refused_token_is_not_retried():
    """Close code 4004 (authentication failed) ends the gateway loop with a report."""
    fake = FakeDiscord().start()
    reports: list[str] = []
    reported = asyncio.Event()

    def report(error: str) -> None:
        reports.append(error)
        reported.set()

    async def sink(msg: Inbound) -> None:
        raise AssertionError(msg)

    cfg = DiscordConfig(
        bot_token="wrong-token",  # pyright: ignore[reportArgumentType]
        api_base_url=fake.api_base,
        gateway_url=f"ws://127.0.0.1:{fake.port}/gateway",
        retry_initial_s=0.05,
        retry_max_s=0.1,
    )
    transport = DiscordTransport(cfg)
    try:
        await transport.start(sink, report)
        await asyncio.wait_for(reported.wait(), 30)
        assert transport._task is not None  # pyright: ignore[reportPrivateUsage]
        await asyncio.wait_for(transport._task, 30)  # pyright: ignore[reportPrivateUsage]
        assert reports == ["gateway closed: 4004 authentication failed"]
        assert len(fake.op_calls("IDENTIFY")) == 1
    finally:
        await transport.stop()
        fake.stop()


def _wait_status(server: InProcessServer, check: Any, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    with server.http() as http:
        while time.monotonic() < deadline:
            (dc,) = http.get("/api/channels").json()
            if dc.get("counts") and check(dc):
                return dc
            time.sleep(0.1)
    raise AssertionError("status never matched")


async def test_interaction_replies_then_channel_messages_once_its_token_expires():
    """The first reply edits the deferred response, later ones are follow-ups; after the
    token's 15 minutes, replies and edits go through the channel instead."""
    fake = FakeDiscord().start()
    transport = DiscordTransport(DiscordConfig(bot_token=TOKEN, api_base_url=fake.api_base))  # pyright: ignore[reportArgumentType]
    try:
        fake.tokens["tok"] = "C1"
        msg = await transport._interaction(  # pyright: ignore[reportPrivateUsage]
            {
                "id": "1",
                "application_id": APP_ID,
                "type": 2,
                "token": "tok",
                "channel_id": "C1",
                "data": {"name": "ask", "options": [{"name": "message", "value": "hi"}]},
                "user": {"id": "42", "username": "alice"},
            }
        )
        assert msg is not None and msg.text == "hi" and msg.reply_ref == "1" and msg.mentioned
        target = target_of(msg)
        first = await transport.send(target, "one")
        await transport.edit(first, "one!")
        await transport.send(target, "two")
        transport._interactions["1"].at -= INTERACTION_TTL_S + 1  # pyright: ignore[reportPrivateUsage]
        await transport.edit(first, "late")
        await transport.send(target, "three")
        assert [(c.method, c.body.get("content")) for c in fake.calls] == [
            ("callback", None),
            ("editWebhookMessage", "one"),
            ("editWebhookMessage", "one!"),
            ("followup", "two"),
            ("editMessage", "late"),
            ("createMessage", "three"),
        ]
        assert fake.of("editMessage")[0].body["message_id"] == first.message_id
    finally:
        await transport.stop()
        fake.stop()
