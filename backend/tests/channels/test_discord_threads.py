"""Discord threads and where the bot answers: a Discord thread's conversation is keyed by its
parent channel and the thread (the parent learnt from THREAD_CREATE, or asked once with
GET /channels/{id} and cached), and `allowed_guild_ids` / `allowed_channel_ids` keep the bot
quiet elsewhere (a thread counts as its parent). A fake Discord, a real gateway in-process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from channels.kit import FAST, HELLO, OK, scripted_config, serving, thread_state, until
from channels.kit import settled_text as final_text
from fakes.discord_server import GUILD, TOKEN, FakeDiscord
from support.inproc import InProcessServer

ALLOWED = "810000000000000001"  # the channel the bot answers in
OTHER = "810000000000000002"  # a channel of the same guild it does not
RULES = [
    {"match": "hello", "steps": [{"text": HELLO}]},
    {"match": "again", "steps": [{"text": "Yes, still here."}]},
    OK,
]
_users = iter(range(20_000, 30_000))


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeDiscord]:
    yield from serving(FakeDiscord())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeDiscord) -> Iterator[InProcessServer]:
    section = {
        "bot_token": TOKEN,
        "api_base_url": fake.api_base,
        "allowed_guild_ids": [GUILD],
        "allowed_channel_ids": [ALLOWED],
        **FAST,
    }
    cfg = scripted_config(RULES, channels={"access": {"mode": "open"}, "discord": section})
    server = InProcessServer(tmp_path_factory.mktemp("discord-threads"), cfg).start(timeout=120)
    fake.wait_for(fake.connected)
    yield server
    server.stop()


def user() -> str:
    return str(next(_users))


def chats(srv: InProcessServer) -> dict[str, list[str]]:
    """Discord conversations: chat key -> the ids of its Pronghorn threads."""
    with srv.http() as http:
        found = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "discord"}, "limit": 1000}
        ).json()
    out: dict[str, list[str]] = {}
    for t in found:
        out.setdefault(t["metadata"]["chat"], []).append(t["thread_id"])
    return out


def lookups(fake: FakeDiscord, channel: str) -> int:
    return len([c for c in fake.of("getChannel") if c.body["channel_id"] == channel])


def humans(srv: InProcessServer, thread_id: str) -> list[str]:
    messages = thread_state(srv, thread_id)["values"]["messages"]
    return [m["content"] for m in messages if m["type"] == "human"]


def say(fake: FakeDiscord, who: str, channel: str, text: str, **extra: Any) -> None:
    fake.message(text, user_id=who, channel_id=channel, guild_id=GUILD, mention=True, **extra)


def test_an_announced_thread_is_one_conversation_under_its_parent(
    srv: InProcessServer, fake: FakeDiscord
):
    who = user()
    thread = fake.thread(ALLOWED)
    say(fake, who, thread, "hello from the thread")
    final_text(fake, thread, "How can I help")  # the answer goes into the Discord thread
    say(fake, who, thread, "there again?")
    final_text(fake, thread, "Yes, still here.")
    key = f"{ALLOWED}:{thread}|{'local'}"
    (pronghorn_thread,) = chats(srv)[key]  # one Pronghorn thread for the Discord thread
    assert humans(srv, pronghorn_thread) == ["hello from the thread", "there again?"]
    assert lookups(fake, thread) == 0  # THREAD_CREATE told the parent: nothing to ask
    assert not [c for c in fake.of("createMessage") if c.body["channel_id"] == ALLOWED]


def test_an_unseen_thread_is_looked_up_once(srv: InProcessServer, fake: FakeDiscord):
    who = user()
    thread = fake.thread(ALLOWED, announce=False)  # e.g. made while the bot was away
    say(fake, who, thread, "hello, new here")
    final_text(fake, thread, "How can I help")
    say(fake, who, thread, "again please")
    final_text(fake, thread, "Yes, still here.")
    assert lookups(fake, thread) == 1  # the parent is cached
    (pronghorn_thread,) = chats(srv)[f"{ALLOWED}:{thread}|local"]
    assert humans(srv, pronghorn_thread) == ["hello, new here", "again please"]


def test_a_slash_command_in_a_thread_joins_the_thread_conversation(
    srv: InProcessServer, fake: FakeDiscord
):
    who = user()
    thread = fake.thread(ALLOWED, announce=False)
    inter = fake.slash(
        "ask", {"message": "hello in the thread"}, user_id=who, channel_id=thread, guild_id=GUILD
    )
    final_text(fake, thread, "How can I help")  # the answer edits the deferred response
    (pronghorn_thread,) = chats(srv)[f"{ALLOWED}:{thread}|local"]
    say(fake, who, thread, "and again")
    final_text(fake, thread, "Yes, still here.")
    assert humans(srv, pronghorn_thread) == ["hello in the thread", "and again"]
    assert inter["channel"]["parent_id"] == ALLOWED
    assert lookups(fake, thread) == 0  # the interaction's partial channel names the parent


def test_a_failed_lookup_is_not_cached(srv: InProcessServer, fake: FakeDiscord):
    who = user()
    thread = fake.thread(ALLOWED, announce=False)
    fake.channel_lookup_failures = 1  # the lookup fails: taken as a plain channel
    say(fake, who, thread, "hello while Discord fails")
    until(lambda: [c for c in fake.of("getChannel!503") if c.body["channel_id"] == thread])
    # the thread's own id is not allowed: ignored; the next message asks again
    say(fake, who, thread, "hello once more")
    final_text(fake, thread, "How can I help")
    assert lookups(fake, thread) == 1  # the refused call was not recorded as a lookup
    assert humans(srv, chats(srv)[f"{ALLOWED}:{thread}|local"][0]) == ["hello once more"]


def test_allow_lists_keep_the_bot_quiet_elsewhere(srv: InProcessServer, fake: FakeDiscord):
    who = user()
    other_thread = fake.thread(OTHER)
    say(fake, who, OTHER, "hello in the wrong channel")
    say(fake, who, other_thread, "hello in a thread of the wrong channel")
    fake.message(
        "hello in another guild", user_id=who, channel_id=ALLOWED, guild_id="1", mention=True
    )
    inter = fake.slash("status", user_id=who, channel_id=OTHER, guild_id=GUILD)
    (refused,) = fake.wait_for(
        lambda: [c for c in fake.of("callback") if c.body["token"] == inter["token"]]
    )
    assert refused.body["type"] == 4 and refused.body["data"]["flags"] == 1 << 6  # ephemeral
    assert "do not answer" in refused.body["data"]["content"]
    fake.message("hello in private", user_id=who)  # DMs are always answered
    final_text(fake, f"dm-{who}", "How can I help")
    say(fake, who, ALLOWED, "hello where allowed")
    final_text(fake, ALLOWED, "How can I help")
    for channel in (OTHER, other_thread):
        sent = [c for c in fake.calls if c.body.get("channel_id") == channel]
        assert [c.method for c in sent] in ([], ["getChannel"])  # looked at, never answered
    keys = chats(srv)
    assert not [k for k in keys if k.startswith(OTHER) or other_thread in k]
    (allowed,) = keys[f"{ALLOWED}|local"]
    assert humans(srv, allowed) == ["hello where allowed"]  # not the other guild's message
