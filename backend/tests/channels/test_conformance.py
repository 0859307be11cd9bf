"""The channel conformance suite: what every chat platform must do, written once and run
against each platform's fake (channels/platforms.py) — one gateway in-process runs all six
channels, in access mode `bound`, with the scripted model.

Every test starts by binding a fresh chat user (`/connect CODE`), so binding is exercised
everywhere; then: the answer (streamed by edits where the platform can edit), redeliveries
running once, a busy thread queueing, long answers split to the platform's limit, files
both ways, commands, approvals and clarifications in the chat (in a group chat too, where
the asker's plain reply answers the question), a rate limit on a post waited out, streaming
edits refused by a rate limit (coalesced, the answer still arriving), and the receiver
reconnecting after the platform drops it (a socket closed, a long poll failed). The other
access modes run in test_conformance_access.py."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.kit import OK, OUT, call, long_text, scripted_config, thread_state, until
from channels.platforms import ALL, Chat, Platform, WeCom
from fakes.platform_base import PlatformServer
from support.inproc import InProcessServer

HELLO = "Hello there, friend! How can I help you today with your question?"
DRIP = "drip " * 60
LONG = long_text(14, 40)
NAMES = [p.name for p in ALL]


def held(gatekeeper: str, name: str) -> dict[str, Any]:
    """ "slow answer NAME": a first line, then the run waits on gate `busy-NAME`."""
    hold = call("hold", url=f"{gatekeeper}/gate/busy-{name}")
    return {
        "match": f"slow answer {name}",
        "steps": [{"text": "Working on it.", **hold}, {"text": "Done, at last."}],
    }


def rules(gatekeeper: str) -> list[dict[str, Any]]:
    return [
        *[held(gatekeeper, name) for name in NAMES],
        {"match": "Files uploaded", "steps": [{"text": "Got your file."}]},
        {"match": "hello", "steps": [{"text": HELLO, "delay_s": 0.02}]},
        {"match": "long", "steps": [{"text": LONG}]},
        {"match": "slow drip", "steps": [{"text": DRIP, "delay_s": 0.05}]},
        {
            "match": "present",
            "steps": [
                call("write_file", description="w", path=f"{OUT}/report.md", content="# Report\n"),
                call("present_files", filepaths=[f"{OUT}/report.md"]),
                {"text": "Here is your report."},
            ],
        },
        {
            "match": "ask me",
            "steps": [
                call("ask_clarification", question="Which format?", options=["Short", "Long"]),
                {"text": "Thanks, that settles it."},
            ],
        },
        {"match": "second", "steps": [{"text": "The second answer."}]},
        OK,
    ]


@pytest.fixture(scope="module")
def platforms() -> Iterator[dict[str, Platform]]:
    made = {cls.name: cls() for cls in ALL}
    for platform in made.values():
        platform.fake.start()
    yield made
    for platform in made.values():
        platform.fake.stop()


@pytest.fixture(scope="module")
def srv(
    tmp_path_factory: pytest.TempPathFactory, platforms: dict[str, Platform]
) -> Iterator[InProcessServer]:
    gatekeeper = platforms["telegram"].fake.url
    cfg = scripted_config(
        rules(gatekeeper),
        tools={"extra": [{"use": "channels.hold:hold"}]},
        approvals={"tools": ["write_file"]},
        channels={
            "access": {"mode": "bound"},
            # a retry cap above the waits the fakes ask for (FAST's 0.2 s would cut them short)
            **{name: {**p.section(), "retry_max_s": 2} for name, p in platforms.items()},
        },
    )
    server = start_gateway(tmp_path_factory.mktemp("conformance"), cfg, platforms)
    yield server
    server.stop()


def start_gateway(
    folder: Path, cfg: dict[str, Any], platforms: dict[str, Platform]
) -> InProcessServer:
    """A gateway on every fake, each fake told it is up (WeCom's also told where to call)."""
    server = InProcessServer(folder, cfg).start(timeout=120)
    for platform in platforms.values():
        if isinstance(platform, WeCom):
            platform.gateway = server
        platform.ready()
    return server


@pytest.fixture(params=NAMES)
def p(
    request: pytest.FixtureRequest, platforms: dict[str, Platform], srv: InProcessServer
) -> Platform:
    return platforms[str(request.param)]


@pytest.fixture
def keeper(platforms: dict[str, Platform]) -> PlatformServer:
    """The fake whose gates the `hold` tool waits on."""
    return platforms["telegram"].fake


# -- helpers -----------------------------------------------------------------------------------


def settled(p: Platform, chat: Chat, contains: str) -> str:
    """Wait until a text in the chat contains `contains` and is not a streaming preview."""
    return p.fake.wait_for(
        lambda: next(
            (t for t in reversed(p.texts(chat)) if contains in t and not t.endswith(" …")), None
        )
    )


def bound_chat(srv: InProcessServer, p: Platform) -> Chat:
    """A fresh chat whose user is bound to the local user."""
    chat = p.chat()
    with srv.http() as http:
        code = http.post(f"/api/channels/{p.name}/connect").json()["code"]
    p.say(chat, f"/connect {code}")
    settled(p, chat, "Connected")
    return chat


def thread_of(srv: InProcessServer, p: Platform, chat: Chat) -> dict[str, Any]:
    """The chat's first thread."""
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search",
            json={
                "metadata": {"channel": p.name},
                "limit": 1000,
                "sort_by": "created_at",
                "sort_order": "asc",
            },
        ).json()
    return next(t for t in threads if t["metadata"].get("chat") == chat.key)


def counts(srv: InProcessServer, p: Platform) -> dict[str, int]:
    with srv.http() as http:
        (status,) = [s for s in http.get("/api/channels").json() if s["name"] == p.name]
    return status.get("counts") or {}


def humans(srv: InProcessServer, p: Platform, chat: Chat) -> list[str]:
    state = thread_state(srv, thread_of(srv, p, chat)["thread_id"])
    return [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]


# -- the behaviours ------------------------------------------------------------------------------


def test_unbound_user_gets_the_hint_and_binding_lets_them_in(srv: InProcessServer, p: Platform):
    chat = p.chat()
    p.say(chat, "hello stranger")
    assert "/connect CODE" in settled(p, chat, "connect")
    assert not any("How can I help" in t for t in p.texts(chat))
    with srv.http() as http:
        code = http.post(f"/api/channels/{p.name}/connect").json()["code"]
    p.say(chat, f"/connect {code}")
    settled(p, chat, "Connected")
    p.say(chat, "hello again")
    settled(p, chat, "How can I help")
    with srv.http() as http:
        conns = http.get("/api/channels/connections").json()["connections"]
    (conn,) = [c for c in conns if c["channel"] == p.name and c["external_id"] == chat.user]
    assert conn["owner_id"] == "local"
    assert thread_of(srv, p, chat)["metadata"]["channel"] == p.name


def test_answer_streams_where_the_platform_edits(srv: InProcessServer, p: Platform):
    chat = bound_chat(srv, p)
    before = len(p.posted(chat))
    p.say(chat, "hello bot")
    settled(p, chat, "How can I help you today with your question?")
    posted = p.posted(chat)[before:]
    if p.edits:  # one message: the placeholder, edited until it holds the answer
        assert len(posted) == 1 and "How can I help" not in posted[0]
        texts = p.texts(chat)
        assert texts[-1].endswith("How can I help you today with your question?")
    else:  # no edits: the answer arrives whole, once
        assert len(posted) == 1 and "How can I help" in posted[0]


def test_redelivery_runs_once(srv: InProcessServer, p: Platform):
    chat = bound_chat(srv, p)
    duplicates = counts(srv, p).get("duplicates", 0)
    handle = p.say(chat, "hello twice")
    p.redeliver(handle)
    settled(p, chat, "How can I help")
    until(lambda: counts(srv, p).get("duplicates", 0) > duplicates)
    assert humans(srv, p, chat) == ["hello twice"]


def test_busy_thread_queues_behind_the_run(
    srv: InProcessServer, p: Platform, keeper: PlatformServer
):
    chat = bound_chat(srv, p)
    p.say(chat, f"slow answer {p.name}")
    keeper.wait_for(lambda: [c for c in keeper.of("gate") if c.body["name"] == f"busy-{p.name}"])
    p.say(chat, "second question")
    settled(p, chat, "Queued")
    keeper.release(f"busy-{p.name}")
    settled(p, chat, "Done, at last.")
    settled(p, chat, "The second answer.")


def test_long_answer_is_split_to_the_platform_limit(srv: InProcessServer, p: Platform):
    chat = bound_chat(srv, p)
    p.say(chat, "a long one")
    settled(p, chat, "Paragraph 13")
    texts = p.texts(chat)
    assert all(p.fits(t) for t in texts)
    assert len(p.posted(chat)) >= 3  # "Connected", then the answer in two or more messages
    for i in range(14):
        assert any(f"Paragraph {i}:" in t for t in texts)


def test_files_both_ways_with_an_approval(srv: InProcessServer, p: Platform):
    chat = bound_chat(srv, p)
    p.say(chat, "present the report")
    settled(p, chat, "write_file")  # the approval asked in the chat
    assert not p.files_out(chat)
    p.say(chat, "approve")
    settled(p, chat, "Here is your report.")
    assert p.fake.wait_for(lambda: p.files_out(chat)) == [("report.md", b"# Report\n")]
    p.say_file(chat, "notes.txt", b"some notes")
    settled(p, chat, "Got your file.")
    thread = thread_of(srv, p, chat)
    (stored,) = until(
        lambda: [
            f for f in (srv.workdir / "data").rglob("notes.txt") if thread["thread_id"] in str(f)
        ]
    )
    assert stored.read_bytes() == b"some notes" and stored.parent.name == "uploads"


def test_a_denied_approval_reaches_the_model(srv: InProcessServer, p: Platform):
    chat = bound_chat(srv, p)
    p.say(chat, "present it please")
    settled(p, chat, "write_file")
    p.say(chat, "deny not today")
    settled(p, chat, "Here is your report.")
    assert not p.files_out(chat)
    state = thread_state(srv, thread_of(srv, p, chat)["thread_id"])
    tool = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    assert "not today" in tool[0]["content"]


def test_commands(srv: InProcessServer, p: Platform):
    chat = bound_chat(srv, p)
    p.say(chat, "/help")
    assert "/new" in settled(p, chat, "/status")
    p.say(chat, "hello first")
    settled(p, chat, "How can I help")
    first = thread_of(srv, p, chat)["thread_id"]
    p.say(chat, "/new")
    started = settled(p, chat, "New conversation started")
    second = started.split("(")[1].split(")")[0]
    assert second != first
    p.say(chat, "/status")
    assert second in settled(p, chat, "Conversation ")
    p.say(chat, "/models")
    assert "(default)" in settled(p, chat, "Models:")


def test_clarification_round_trip(srv: InProcessServer, p: Platform):
    chat = bound_chat(srv, p)
    p.say(chat, "ask me something")
    question = settled(p, chat, "Which format?")
    assert "Short" in question and "Long" in question
    p.say(chat, "2")
    settled(p, chat, "Thanks, that settles it.")
    state = thread_state(srv, thread_of(srv, p, chat)["thread_id"])
    tool = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["content"] == "Long"


def test_rate_limited_post_is_waited_out_and_sent_once(srv: InProcessServer, p: Platform):
    chat = bound_chat(srv, p)
    before = len(p.post_calls(chat))
    refused_name = p.limit_next_post()
    started = time.monotonic()
    p.say(chat, "hello limits")
    settled(p, chat, "How can I help")
    (refused,) = [c for c in p.fake.of(refused_name) if c.at >= started]
    (post,) = p.post_calls(chat)[before:]  # sent once: the retry, no duplicate
    if p.asks_wait is not None:  # waited as the platform asked
        assert post.at - refused.at >= p.asks_wait - 0.05


def test_edits_refused_by_rate_limits_coalesce_and_the_answer_arrives(
    srv: InProcessServer, p: Platform
):
    if p.edit_method is None:
        why = "no edits" if not p.edits else "its fake limits every call at once (see its suite)"
        pytest.skip(f"{p.name}: {why}")
    chat = bound_chat(srv, p)
    before = len(p.post_calls(chat))
    started = time.monotonic()
    p.limit_edits(10**6)
    try:
        p.say(chat, "a slow drip")
        final = DRIP.strip()
        p.fake.wait_for(lambda: final in p.posted(chat)[before:])
    finally:
        p.fake.limited.clear()
    refused = [c for c in p.fake.of(f"{p.edit_method}!429") if c.at >= started]
    assert 0 < len(refused) < 40  # 60 streamed chunks, far fewer edit attempts: coalesced
    assert len(p.posted(chat)[before:]) == 2  # the placeholder, then the answer sent anew


def test_reconnects_after_the_platform_drops_the_connection(srv: InProcessServer, p: Platform):
    connections = p.connections()
    if not p.drop():
        pytest.skip(f"{p.name} keeps no connection (webhooks)")
    p.fake.wait_for(lambda: p.connections() > connections)
    chat = bound_chat(srv, p)
    p.say(chat, "hello after the drop")
    settled(p, chat, "How can I help")


def group_of(srv: InProcessServer, p: Platform) -> Chat:
    if not p.groups:
        pytest.skip(f"{p.name}: no group chats")
    return p.group(bound_chat(srv, p))


def test_in_a_group_only_mentions_are_answered(srv: InProcessServer, p: Platform):
    group = group_of(srv, p)
    p.say_in_group(group, "hello everyone", mention=False)
    p.say_in_group(group, "hello bot", mention=True)
    settled(p, group, "How can I help")
    assert len(p.post_calls(group)) == 1  # the mention's answer only


def test_in_a_group_the_askers_plain_reply_answers_the_question(srv: InProcessServer, p: Platform):
    group = group_of(srv, p)
    p.say_in_group(group, "ask me something", mention=True)
    settled(p, group, "Which format?")
    other = p.group(p.chat())  # someone else, unbound: their plain message is not for the bot
    p.say_in_group(dataclasses.replace(other, where=group.where), "1", mention=False)
    p.say_in_group(group, "2", mention=False)  # the asker, no mention: the answer
    settled(p, group, "Thanks, that settles it.")
    texts = p.texts(group)
    assert not [t for t in texts if "/connect CODE" in t or "How can I help" in t]
