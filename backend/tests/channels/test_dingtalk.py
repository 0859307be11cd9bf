"""DingTalk end to end: robot messages pushed down a fake Stream-mode connection to a real
gateway in-process with the scripted model; replies as interactive cards (sent, then
updated as the answer streams) on a fake OpenAPI on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.kit import (
    BUSY_GATE,
    FAST,
    HELLO,
    HELLO_RULE,
    HOLD_TOOLS,
    OK,
    TAIL_RULES,
    gateway,
    held_rule,
    long_text,
    scripted_config,
    serving,
    thread_state,
    until,
)
from channels.kit import settled_text as final_text
from fakes.dingtalk_server import CLIENT_ID, CLIENT_SECRET, FakeDingTalk
from support.inproc import InProcessServer

LONG = long_text(20, 50)
SLOW = "slowly " * 60
RULES = [
    HELLO_RULE,
    {"match": "long", "steps": [{"text": LONG}]},
    {"match": "Files uploaded", "steps": [{"text": "Got your file."}]},
    {"match": "drip", "steps": [{"text": SLOW, "delay_s": 0.05}]},
    *TAIL_RULES,
    OK,
]


def config(fake: FakeDingTalk, *, access: str = "open", **extra: Any) -> dict[str, Any]:
    section = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "api_base_url": fake.url,
        "oapi_base_url": fake.url,
        **FAST,
        "retry_max_s": 2,  # above the Retry-After the fake asks for
        **extra,
    }
    return scripted_config(
        [held_rule(fake), *RULES],
        tools=HOLD_TOOLS,
        channels={"access": {"mode": access}, "dingtalk": section},
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeDingTalk]:
    yield from serving(FakeDingTalk())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeDingTalk) -> Iterator[InProcessServer]:
    server_iter = gateway(tmp_path_factory.mktemp("dingtalk"), config(fake))
    server = next(server_iter)
    fake.wait_for(lambda: fake.of("ws_connect"))
    yield server
    next(server_iter, None)


_ids = iter(range(1, 100_000))


def private(fake: FakeDingTalk, text: str, **kwargs: Any) -> str:
    """A private message from a new (or the given) staff member; its conversation as the
    fake files the bot's answers (`single:<staff>`)."""
    staff = kwargs.pop("staff", None) or f"staff{next(_ids)}"
    fake.push(fake.message(conversation=f"cid-{staff}", staff=staff, text=text, **kwargs))
    return f"single:{staff}"


def threads_of(srv: InProcessServer, conversation: str) -> list[dict[str, Any]]:
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "dingtalk"}, "limit": 1000}
        ).json()
    return [t for t in threads if str(t["metadata"].get("chat", "")).startswith(conversation)]


def status(srv: InProcessServer) -> dict[str, Any]:
    with srv.http() as http:
        (found,) = [s for s in http.get("/api/channels").json() if s["name"] == "dingtalk"]
    return found


# -- Stream mode -----------------------------------------------------------------------------


def test_connection_opens_with_a_ticket_and_acks_frames(srv: InProcessServer, fake: FakeDingTalk):
    (opened, *_) = fake.of("open")
    assert opened.body["clientId"] == CLIENT_ID
    assert opened.body["subscriptions"] == [
        {"type": "CALLBACK", "topic": "/v1.0/im/bot/messages/get"}
    ]
    ping = fake.system("ping", {"opaque": "abc-123"})
    ack = fake.wait_for(lambda: fake.acks.get(ping))
    assert ack["code"] == 200 and json.loads(ack["data"]) == {"opaque": "abc-123"}
    staff = f"staff{next(_ids)}"
    frame = fake.push(fake.message(conversation=f"cid-{staff}", staff=staff, text="hello"))
    ack = fake.wait_for(lambda: fake.acks.get(frame))
    assert ack["code"] == 200 and ack["headers"]["messageId"] == frame
    assert ack["headers"]["contentType"] == "application/json"
    final_text(fake, f"single:{staff}", "How can I help")


def test_disconnect_and_a_dropped_connection_reconnect_with_a_new_ticket(
    srv: InProcessServer, fake: FakeDingTalk
):
    before = len(fake.of("ws_connect"))
    fake.system("disconnect", {"reason": "server restart"})
    fake.wait_for(lambda: len(fake.of("ws_connect")) >= before + 1)
    fake.drop_connection()
    fake.wait_for(lambda: len(fake.of("ws_connect")) >= before + 2)
    tickets = [c.body["ticket"] for c in fake.of("ws_connect")]
    assert len(set(tickets)) == len(tickets)  # a fresh ticket every time
    conversation = private(fake, "hello after the reconnect")
    final_text(fake, conversation, "How can I help")


# -- conversations ---------------------------------------------------------------------------


def test_private_answer_streams_by_card_updates(srv: InProcessServer, fake: FakeDingTalk):
    conversation = private(fake, "hello bot")
    final = final_text(fake, conversation, "How can I help")
    assert final == HELLO  # Markdown as written
    (card,) = [c for c in fake.sent(conversation) if c.method == "card"]
    assert card.body["markdown"] == "…"  # the placeholder, then updated in place
    updates = [c for c in fake.of("card_update") if c.body["card"] == card.body["card"]]
    assert updates and updates[-1].body["markdown"] == HELLO


def test_long_answer_continues_in_more_cards(srv: InProcessServer, fake: FakeDingTalk):
    conversation = private(fake, "a long one")
    fake.wait_for(lambda: len([c for c in fake.sent(conversation) if c.method == "card"]) >= 2)
    final_text(fake, conversation, "Paragraph 19")
    assert all(len(t) <= 5000 for t in fake.texts(conversation))


def test_group_answers_only_when_mentioned(srv: InProcessServer, fake: FakeDingTalk):
    group = f"cidGroup{next(_ids)}"
    fake.push(
        fake.message(conversation=group, text="hello unmentioned", group=True, mentioned=False)
    )
    fake.push(fake.message(conversation=group, text=" hello team", group=True))
    final_text(fake, group, "How can I help")
    (card,) = [c for c in fake.sent(group) if c.method == "card"]
    assert fake.cards[card.body["card"]]["openConversationId"] == group
    (thread,) = threads_of(srv, group)
    human = [
        m["content"]
        for m in thread_state(srv, thread["thread_id"])["values"]["messages"]
        if m["type"] == "human"
    ]
    assert human == ["hello team"]


def test_files_both_ways(srv: InProcessServer, fake: FakeDingTalk):
    staff = f"staff{next(_ids)}"
    conversation = private(fake, "present the report", staff=staff)
    (sent,) = fake.wait_for(lambda: [c for c in fake.sent(conversation) if c.method == "robot"])
    assert sent.body["msgKey"] == "sampleFile" and sent.body["kind"] == "private"
    media = fake.media[sent.body["param"]["mediaId"]]
    assert media == ("file", "report.md", b"# Report\n")
    assert sent.body["param"]["fileName"] == "report.md"
    final_text(fake, conversation, "Here is your report.")
    fake.files["dl-notes"] = b"some notes"
    content = {"downloadCode": "dl-notes", "fileName": "notes.txt"}
    private(fake, "", staff=staff, msgtype="file", content=content)
    final_text(fake, conversation, "Got your file.")
    (thread,) = threads_of(srv, f"cid-{staff}")
    stored = {p.name: p for p in (srv.workdir / "data").rglob("*") if thread["thread_id"] in str(p)}
    assert stored["notes.txt"].read_bytes() == b"some notes"
    jpeg = b"\xff\xd8\xff\xe0 a photo"
    fake.files["dl-photo"] = jpeg
    picture = {"downloadCode": "dl-photo", "pictureDownloadCode": "x"}
    private(fake, "", staff=staff, msgtype="picture", content=picture)

    def photo() -> Path | None:
        found = [
            p for p in (srv.workdir / "data").rglob("image.jpg") if thread["thread_id"] in str(p)
        ]
        return found[0] if found else None

    until(photo)
    found = photo()
    assert (
        found is not None and found.read_bytes() == jpeg
    )  # DingTalk's picture kept its format: not image.png


def test_redelivered_message_runs_once(srv: InProcessServer, fake: FakeDingTalk):
    staff = f"staff{next(_ids)}"
    data = fake.message(conversation=f"cid-{staff}", staff=staff, text="hello twice")
    fake.push(data)
    fake.push(data)  # the same msgId in a new frame
    final_text(fake, f"single:{staff}", "How can I help")
    fake.wait_for(lambda: status(srv)["counts"]["duplicates"] >= 1)
    assert len([c for c in fake.sent(f"single:{staff}") if c.method == "card"]) == 1


def test_clarification_and_busy_thread(srv: InProcessServer, fake: FakeDingTalk):
    staff = f"staff{next(_ids)}"
    conversation = private(fake, "ask me something", staff=staff)
    assert "2. Long" in final_text(fake, conversation, "Which format?")
    private(fake, "2", staff=staff)
    final_text(fake, conversation, "Thanks, that settles it.")
    private(fake, "slow answer", staff=staff)
    fake.wait_for(lambda: fake.of("gate"))
    private(fake, "second question", staff=staff)
    final_text(fake, conversation, "Queued")
    fake.release(BUSY_GATE)
    final_text(fake, conversation, "Done, at last.")
    final_text(fake, conversation, "The second answer.")


def test_rate_limits_are_waited_out_and_the_final_answer_arrives(
    srv: InProcessServer, fake: FakeDingTalk
):
    fake.retry_after = 1
    fake.limited.update({"card": 1, "card_update": 10**6})
    try:
        conversation = private(fake, "a drip answer")
        final = SLOW.strip()
        fake.wait_for(
            lambda: any(
                c.body["markdown"] == final for c in fake.sent(conversation) if c.method == "card"
            )
        )
    finally:
        fake.limited.clear()
    (refused,) = [c for c in fake.of("card!429") if c.body["conversation"] == conversation]
    cards = [c for c in fake.sent(conversation) if c.method == "card"]
    assert cards[0].at - refused.at >= 0.9  # waited as Retry-After asked
    assert [c.body["markdown"] for c in cards] == ["…", final]  # the final one, sent anew
    refused_updates = [
        c for c in fake.of("card_update!429") if c.body["conversation"] == conversation
    ]
    assert 0 < len(refused_updates) < 40  # coalesced, not one per streamed chunk


def test_token_is_renewed_when_refused(srv: InProcessServer, fake: FakeDingTalk):
    conversation = private(fake, "hello one")
    final_text(fake, conversation, "How can I help")
    fetched = len(fake.of("token"))
    fake.expire_tokens()
    private(fake, "second question", staff=conversation.removeprefix("single:"))
    final_text(fake, conversation, "The second answer.")
    assert len(fake.of("token")) == fetched + 1 and fake.of("refused")


# -- identity and failures -------------------------------------------------------------------


def test_unbound_user_gets_the_hint_then_binds_and_owns_the_thread(tmp_path: Path):
    staff = f"staff{next(_ids)}"
    fake = FakeDingTalk().start()
    server = InProcessServer(tmp_path, config(fake, access="bound")).start(timeout=120)
    try:
        fake.wait_for(lambda: fake.of("ws_connect"))
        conversation = private(fake, "hello", staff=staff)
        assert "/connect CODE" in final_text(fake, conversation, "connect")
        with server.http() as http:
            code = http.post("/api/channels/dingtalk/connect").json()
        private(fake, f"/connect {code['code']}", staff=staff)
        final_text(fake, conversation, "Connected")
        private(fake, "hello again", staff=staff)
        final_text(fake, conversation, "How can I help")
        with server.http() as http:
            conns = http.get("/api/channels/connections").json()["connections"]
        (conn,) = [c for c in conns if c["external_id"] == staff]
        assert conn["owner_id"] == "local" and conn["channel"] == "dingtalk"
    finally:
        server.stop()
        fake.stop()


def test_refused_credentials_show_in_the_status(tmp_path: Path):
    fake = FakeDingTalk().start()
    cfg = config(fake, client_secret="wrong")
    server = InProcessServer(tmp_path, cfg).start(timeout=120)
    try:

        def failed() -> dict[str, Any] | None:
            found = status(server)
            errors = found.get("counts", {}).get("errors", 0)  # none yet: not started yet
            return found if errors >= 2 else None

        fake.wait_for(failed)
        assert "401" in str(status(server)["last_error"])
        assert not fake.of("ws_connect")
    finally:
        server.stop()
        fake.stop()
