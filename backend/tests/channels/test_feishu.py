"""Feishu / Lark end to end: event callbacks (plain, or encrypted and signed) POSTed at a real
gateway in-process with the scripted model, replies to a fake Open API on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
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
)
from channels.kit import settled_text as final_text
from deerflow.shapes import LARK_STATUS, assert_shape
from fakes.feishu_server import (
    APP_ID,
    APP_SECRET,
    BOT_OPEN_ID,
    ENCRYPT_KEY,
    FRAME,
    VERIFICATION_TOKEN,
    FakeFeishu,
    delivery,
    encrypt,
    mention,
)
from pronghorn.channels.access_token import AccessToken
from pronghorn.channels.errors import PlatformError
from pronghorn.channels.feishu.channel import FeishuTransport
from pronghorn.channels.feishu.crypto import decrypt
from pronghorn.channels.feishu.frame import Frame, FrameError, decode, encode
from pronghorn.channels.feishu.token import TenantFetch
from pronghorn.channels.feishu.ws import LongConnection
from pronghorn.channels.http_api import Backoff
from pronghorn.channels.types import InboundFile, Target
from pronghorn.config.schema.channels import FeishuConfig
from support.inproc import InProcessServer

EVENTS = "/api/channels/feishu/events"
LONG = long_text(20, 40)
RULES = [
    HELLO_RULE,
    {"match": "long", "steps": [{"text": LONG}]},
    {"match": "Files uploaded", "steps": [{"text": "Got your file."}]},
    *TAIL_RULES,
    OK,
]


def config(fake: FakeFeishu, *, access: str = "open", encrypted: bool = True) -> dict[str, Any]:
    section: dict[str, Any] = {
        "app_id": APP_ID,
        "app_secret": APP_SECRET,
        "verification_token": VERIFICATION_TOKEN,
        "api_base_url": fake.url,
        **FAST,
    }
    if encrypted:
        section["encrypt_key"] = ENCRYPT_KEY
    return scripted_config(
        [held_rule(fake), *RULES],
        tools=HOLD_TOOLS,
        channels={"access": {"mode": access}, "feishu": section},
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeFeishu]:
    yield from serving(FakeFeishu())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeFeishu) -> Iterator[InProcessServer]:
    yield from gateway(tmp_path_factory.mktemp("feishu"), config(fake))


@pytest.fixture(scope="module")
def plain_srv(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeFeishu
) -> Iterator[InProcessServer]:
    """No Encrypt Key (plain callbacks, token check only) and access mode `bound`."""
    cfg = config(fake, access="bound", encrypted=False)
    yield from gateway(tmp_path_factory.mktemp("feishu-plain"), cfg)


_chats = iter(range(1, 100_000))


def new_chat() -> str:
    return f"oc_{next(_chats)}"


def post(srv: InProcessServer, payload: dict[str, Any], **kwargs: Any) -> httpx.Response:
    body, headers = delivery(payload, **kwargs)
    with srv.http() as http:
        return http.post(EVENTS, content=body, headers=headers)


def say(srv: InProcessServer, fake: FakeFeishu, chat: str, text: str, **kwargs: Any) -> str:
    """A user's text message in `chat` delivered (encrypted and signed); its message id."""
    event = fake.message_event(chat_id=chat, text=text, **kwargs)
    response = post(srv, event)
    assert response.status_code == 200, response.text
    return str(event["event"]["message"]["message_id"])


def threads_of(srv: InProcessServer, chat: str) -> list[dict[str, Any]]:
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "feishu"}, "limit": 1000}
        ).json()
    return [t for t in threads if str(t["metadata"].get("chat", "")).startswith(chat)]


def runs_of(srv: InProcessServer, thread_id: str) -> list[dict[str, Any]]:
    with srv.http() as http:
        return http.get(f"{srv.api}/threads/{thread_id}/runs").json()


def human_texts(srv: InProcessServer, thread_id: str) -> list[str]:
    state = thread_state(srv, thread_id)
    return [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]


def channel_status(srv: InProcessServer) -> dict[str, Any]:
    with srv.http() as http:
        (status,) = http.get("/api/channels").json()
    return status


# -- the callback envelope -------------------------------------------------------------------


def test_challenge_handshake_encrypted_and_plain(srv: InProcessServer, plain_srv: InProcessServer):
    challenge = {"challenge": "ch-123", "token": VERIFICATION_TOKEN, "type": "url_verification"}
    encrypted = post(srv, challenge, signed=False)  # the handshake carries no signature
    assert encrypted.status_code == 200 and encrypted.json() == {"challenge": "ch-123"}
    plain = post(plain_srv, challenge, encrypt_key=None)
    assert plain.status_code == 200 and plain.json() == {"challenge": "ch-123"}
    wrong = post(plain_srv, {**challenge, "token": "nope"}, encrypt_key=None)
    assert wrong.status_code == 401 and "verification token" in wrong.json()["detail"]
    wrong_enc = post(srv, {**challenge, "token": "nope"})
    assert wrong_enc.status_code == 401
    # An encrypted body to a gateway with no Encrypt Key: refused, not guessed at.
    no_key = post(plain_srv, challenge)
    assert no_key.status_code == 401 and "encrypt_key" in no_key.json()["detail"]
    # Encrypted with another key: does not decrypt.
    other = post(srv, challenge, encrypt_key="another-key", signed=False)
    assert other.status_code == 401
    with srv.http() as http:
        assert http.post(EVENTS, content=b"not json").status_code == 400
        garbage = http.post(EVENTS, json={"encrypt": "%%% not base64"})
        assert garbage.status_code == 401


def test_bad_signature_or_token_is_refused(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    before = channel_status(srv)["counts"]["received"]
    event = fake.message_event(chat_id=chat, text="hello")
    bad_sig = post(srv, event, sign_key="wrong-key")
    assert bad_sig.status_code == 401 and "signature" in bad_sig.json()["detail"]
    body, headers = delivery(event)
    with srv.http() as http:
        unsigned = http.post(EVENTS, content=body, headers={"content-type": "application/json"})
        tampered_headers = {**headers, "x-lark-request-nonce": "other"}
        tampered = http.post(EVENTS, content=body, headers=tampered_headers)
    assert unsigned.status_code == 401 and tampered.status_code == 401
    old = post(srv, event, timestamp=int(time.time()) - 2 * 3600)
    assert old.status_code == 401 and "too old" in old.json()["detail"]
    forged = json.loads(json.dumps(event))
    forged["header"]["token"] = "forged"
    assert post(srv, forged).status_code == 401
    assert channel_status(srv)["counts"]["received"] == before  # nothing reached the channel
    assert fake.sent(chat) == []


# -- conversations ---------------------------------------------------------------------------


def test_reply_streams_by_card_edits_and_ends_right(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    say(srv, fake, chat, "hello bot")
    final = final_text(fake, chat, "How can I help you today with your question?")
    assert final == HELLO  # card Markdown keeps **bold**
    sent = fake.sent(chat)
    assert len(sent) == 1 and sent[0].method == "send"  # a direct chat: to the chat itself
    assert sent[0].body["msg_type"] == "interactive"
    patches = [c for c in fake.of("patch") if c.body["chat_id"] == chat]
    assert len(patches) >= 2 and {p.body["message_id"] for p in patches} == {
        sent[0].body["message_id"]
    }
    texts = fake.texts(chat)
    assert texts[0] == "…" and any(t.endswith(" …") for t in texts[1:-1])


def test_long_reply_is_split(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    say(srv, fake, chat, "a long one please")
    final_text(fake, chat, "Paragraph 19")
    finals = [c for c in fake.of("patch") if c.body["chat_id"] == chat]
    extra = fake.sent(chat)[1:]
    texts = fake.texts(chat)
    pieces = [texts[len(texts) - len(extra) - 1], *texts[len(texts) - len(extra) :]]
    assert finals and len(extra) >= 2 and all(len(p) <= 6000 for p in pieces)
    assert "".join(pieces).replace("\n", "").replace(" ", "") == LONG.replace("\n", "").replace(
        " ", ""
    )


def test_artifact_arrives_as_a_file(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    say(srv, fake, chat, "present a report")
    (file_msg,) = fake.wait_for(
        lambda: [c for c in fake.sent(chat) if c.body["msg_type"] == "file"]
    )
    key = json.loads(file_msg.body["content"])["file_key"]
    assert fake.uploads[key] == ("stream", "report.md", b"# Report\n")
    final_text(fake, chat, "Here is your report.")


def test_inbound_file_and_image_land_in_uploads(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    event = fake.message_event(
        chat_id=chat,
        message_type="file",
        content={"file_key": "file_v3_abc", "file_name": "notes.txt"},
    )
    mid = event["event"]["message"]["message_id"]
    fake.resources[(mid, "file_v3_abc")] = b"some notes"
    assert post(srv, event).status_code == 200
    final_text(fake, chat, "Got your file.")
    image = fake.message_event(chat_id=chat, message_type="image", content={"image_key": "img_1"})
    fake.resources[(image["event"]["message"]["message_id"], "img_1")] = b"\x89PNG fake"
    assert post(srv, image).status_code == 200
    (thread,) = threads_of(srv, chat)

    def names() -> set[str]:
        with srv.http() as http:
            files = http.get(f"/api/threads/{thread['thread_id']}/uploads").json()
        return {f["name"] for f in (files["files"] if isinstance(files, dict) else files)}

    # the first answer's preview and final both say it: wait for the image itself
    fake.wait_for(lambda: {"notes.txt", "image.png"} <= names())
    stored = {p.name: p for p in (srv.workdir / "data").rglob("*") if thread["thread_id"] in str(p)}
    assert stored["notes.txt"].read_bytes() == b"some notes"
    assert stored["image.png"].read_bytes() == b"\x89PNG fake"
    kinds = {c.body["key"]: c.body["type"] for c in fake.of("resource")}
    assert kinds["file_v3_abc"] == "file" and kinds["img_1"] == "image"


def test_group_mention_replies_to_the_root_and_the_thread_is_one_conversation(
    srv: InProcessServer, fake: FakeFeishu
):
    group = new_chat()
    before = channel_status(srv)["counts"]["received"]
    say(srv, fake, group, "hello everyone", chat_type="group")  # no mention: ignored
    bot = [mention("@_user_1", BOT_OPEN_ID, "Pronghorn"), mention("@_user_2", "ou_bob", "Bob")]
    root = say(
        srv, fake, group, "@_user_1 hello, ask @_user_2 too", chat_type="group", mentions=bot
    )
    final_text(fake, group, "How can I help")
    (first,) = [c for c in fake.sent(group)]
    assert first.method == "reply" and first.body["root_id"] == root
    assert first.body["reply_in_thread"] is False
    # A follow-up in the same Feishu thread (root_id): the same Pronghorn thread.
    say(
        srv,
        fake,
        group,
        "@_user_1 second question",
        chat_type="group",
        mentions=bot[:1],
        root_id=root,
    )
    final_text(fake, group, "The second answer.")
    assert all(c.method == "reply" and c.body["root_id"] == root for c in fake.sent(group))
    (thread,) = threads_of(srv, group)
    assert len(runs_of(srv, thread["thread_id"])) == 2
    assert human_texts(srv, thread["thread_id"]) == ["hello, ask @Bob too", "second question"]
    assert channel_status(srv)["counts"]["received"] == before + 3


def test_group_plain_reply_answers_the_clarification(srv: InProcessServer, fake: FakeFeishu):
    group = new_chat()
    bot = [mention("@_user_1", BOT_OPEN_ID, "Pronghorn")]
    root = say(
        srv,
        fake,
        group,
        "@_user_1 ask me something",
        chat_type="group",
        mentions=bot,
        user="ou_dana",
    )
    final_text(fake, group, "Which format?")
    # Another member's plain message: not for the bot. The asker's plain message (no
    # mention, not in the Feishu thread): the answer, replied under the question's root.
    say(srv, fake, group, "2", chat_type="group", user="ou_erin")
    say(srv, fake, group, "2", chat_type="group", user="ou_dana")
    final_text(fake, group, "Thanks, that settles it.")
    assert all(c.method == "reply" and c.body["root_id"] == root for c in fake.sent(group))
    (thread,) = threads_of(srv, group)
    state = thread_state(srv, thread["thread_id"])
    tool = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["content"] == "Long"


def test_rich_text_post_is_read(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    content = {
        "title": "Daily",
        "content": [
            [
                {"tag": "text", "text": "hello "},
                {"tag": "a", "text": "docs", "href": "https://x.y"},
            ],
            [{"tag": "text", "text": "second line"}],
        ],
    }
    event = fake.message_event(chat_id=chat, message_type="post", content=content)
    assert post(srv, event).status_code == 200
    final_text(fake, chat, "How can I help")
    (thread,) = threads_of(srv, chat)
    assert human_texts(srv, thread["thread_id"]) == [
        "Daily\nhello [docs](https://x.y)\nsecond line"
    ]


def test_new_starts_a_new_thread(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    say(srv, fake, chat, "hello one")
    final_text(fake, chat, "How can I help")
    (first,) = threads_of(srv, chat)
    say(srv, fake, chat, "/new")
    reply = final_text(fake, chat, "New conversation started")
    assert first["thread_id"] not in reply
    second = reply.split("(")[1].rstrip(").")
    say(srv, fake, chat, "/status")
    assert second in final_text(fake, chat, "Conversation ")


def test_clarification_round_trip(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    say(srv, fake, chat, "ask me something")
    question = final_text(fake, chat, "Which format?")
    assert "1. Short" in question and "2. Long" in question
    say(srv, fake, chat, "2")
    final_text(fake, chat, "Thanks, that settles it.")
    (thread,) = threads_of(srv, chat)
    state = thread_state(srv, thread["thread_id"])
    tool = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["content"] == "Long"


def test_busy_thread_queues(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    say(srv, fake, chat, "slow answer")
    fake.wait_for(lambda: [c for c in fake.of("patch") if c.body["chat_id"] == chat])
    say(srv, fake, chat, "second question")
    final_text(fake, chat, "Queued")  # while the first run is held in flight
    fake.release(BUSY_GATE)
    final_text(fake, chat, "Done, at last.")
    final_text(fake, chat, "The second answer.")
    (thread,) = threads_of(srv, chat)
    assert len(runs_of(srv, thread["thread_id"])) == 2


def test_redelivered_event_runs_once(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    event = fake.message_event(chat_id=chat, text="hello twice")
    assert post(srv, event).status_code == 200
    assert post(srv, event).status_code == 200  # Feishu's retry: same event_id, new signature
    final_text(fake, chat, "How can I help")
    _wait_status(srv, lambda s: s["counts"]["duplicates"] >= 1)
    (thread,) = threads_of(srv, chat)
    assert len(runs_of(srv, thread["thread_id"])) == 1


def test_bot_messages_are_ignored_and_secrets_masked(srv: InProcessServer, fake: FakeFeishu):
    fake.wait_for(lambda: fake.of("bot_info"))  # the bot knows its own open_id
    chat = new_chat()
    say(srv, fake, chat, "hello from an app", sender_type="app")
    say(srv, fake, chat, "hello from myself", user=BOT_OPEN_ID)
    say(srv, fake, chat, "/help")
    final_text(fake, chat, "/new")
    assert not any("How can I help" in t for t in fake.texts(chat))
    status = channel_status(srv)
    assert status["name"] == "feishu" and status["running"] is True
    for key in ("app_secret", "verification_token", "encrypt_key"):
        assert status["config"][key] == "**********"
    assert APP_SECRET not in str(status) and ENCRYPT_KEY not in str(status)
    with srv.http() as http:
        providers = http.get("/api/channels/providers").json()["providers"]
    assert {p["provider"] for p in providers if p["enabled"]} == {"feishu"}


def test_lark_integration_status_is_the_running_channel(srv: InProcessServer, fake: FakeFeishu):
    """DeerFlow's integrations screen reads the Feishu channel's real state."""
    fake.wait_for(lambda: fake.of("bot_info"))
    with srv.http() as http:
        status = http.get("/api/integrations/lark/status").json()
    assert_shape(status, LARK_STATUS)
    assert status["app_configured"] is True and status["app_id"] == APP_ID
    assert status["app_brand"] == "feishu"
    assert status["auth"]["status"] == "authenticated" and status["auth"]["verified"] is True
    assert APP_SECRET not in str(status)


def test_token_is_renewed_when_the_platform_refuses_it(srv: InProcessServer, fake: FakeFeishu):
    chat = new_chat()
    say(srv, fake, chat, "hello one")
    final_text(fake, chat, "How can I help")
    fetched = len(fake.of("token"))
    fake.expire_tokens()
    say(srv, fake, chat, "second question")
    final_text(fake, chat, "The second answer.")
    assert len(fake.of("token")) >= fetched + 1
    assert fake.of("refused")  # the old token was tried, refused with 99991663, then renewed


async def test_token_is_refreshed_before_it_expires(fake: FakeFeishu):
    now = [1000.0]
    fake.token_ttl = 100
    try:
        async with httpx.AsyncClient() as client:
            fetch = TenantFetch(client, fake.url, APP_ID, APP_SECRET, Backoff(0.05, 0.2))
            tokens = AccessToken(fetch, early_s=600, clock=lambda: now[0])
            first = await tokens.get()
            assert await tokens.get() == first and tokens.fetches == 1  # cached
            now[0] += 49  # half the TTL is the safety margin for so short a token
            assert await tokens.get() == first
            now[0] += 2
            second = await tokens.get()
            assert second != first and tokens.fetches == 2
            tokens.invalidate(first)  # a stale refusal does not drop the new token
            assert await tokens.get() == second
            tokens.invalidate(second)
            assert await tokens.get() not in (first, second) and tokens.fetches == 3
            bad = AccessToken(TenantFetch(client, fake.url, APP_ID, "wrong", Backoff(0.05, 0.2)))
            with pytest.raises(Exception, match="10014"):
                await bad.get()
    finally:
        fake.token_ttl = 7200


# -- identity --------------------------------------------------------------------------------


def test_unbound_user_gets_the_hint_then_binds_and_owns_the_thread(
    plain_srv: InProcessServer, fake: FakeFeishu
):
    chat = new_chat()

    def plain(text: str) -> None:
        event = fake.message_event(chat_id=chat, text=text, user="ou_carol")
        assert post(plain_srv, event, encrypt_key=None).status_code == 200

    plain("hello")
    assert "/connect CODE" in final_text(fake, chat, "connect")
    with plain_srv.http() as http:
        code = http.post("/api/channels/feishu/connect").json()
    assert code["command"] == f"/connect {code['code']}"
    plain(f"/connect {code['code']}")
    final_text(fake, chat, "Connected")
    plain("hello again")
    final_text(fake, chat, "How can I help")
    (thread,) = threads_of(plain_srv, chat)
    runs = runs_of(plain_srv, thread["thread_id"])
    assert runs and all(r["metadata"].get("channel") == "feishu" for r in runs)
    with plain_srv.http() as http:
        conns = http.get("/api/channels/connections").json()["connections"]
    (conn,) = [c for c in conns if c["external_id"] == "ou_carol"]
    assert conn["owner_id"] == "local" and conn["channel"] == "feishu"


# -- failures --------------------------------------------------------------------------------


async def test_platform_down_retries_and_gateway_stays_up(tmp_path: Path):
    fake = FakeFeishu().start()
    fake.down = True
    server = InProcessServer(tmp_path, config(fake)).start(timeout=120)
    try:
        await asyncio.to_thread(_wait_status, server, lambda s: s["counts"]["errors"] >= 3)
        assert "503" in channel_status(server)["last_error"]
        assert "feishu bot info failed" in server.logs()
        chat = new_chat()
        event = fake.message_event(chat_id=chat, text="hello while down")
        assert post(server, event).status_code == 200  # taken; the reply cannot go out
        await asyncio.to_thread(
            _wait_status, server, lambda _s: "channel reply failed" in server.logs()
        )
        with server.http() as http:
            assert http.get("/health").status_code == 200
        assert APP_SECRET not in server.logs()
        fake.down = False
        say(server, fake, chat, "hello again")
        final_text(fake, chat, "How can I help")
        fake.wait_for(lambda: fake.of("bot_info"))  # it kept trying and got through
    finally:
        server.stop()
        fake.stop()


def _wait_status(
    server: InProcessServer, check: Callable[[dict[str, Any]], bool], timeout: float = 60
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = channel_status(server)
        if status.get("counts") and check(status):
            return status
        time.sleep(0.1)
    raise AssertionError("status never matched")


def test_decrypt_reads_the_documented_sample():
    """The example of Feishu's event-encryption guide: key "test key", plaintext "hello
    world"; and the fake's envelope (written from the same guide) round-trips."""
    assert decrypt("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=") == b"hello world"
    assert json.loads(decrypt("k", encrypt("k", b'{"a":1}'))) == {"a": 1}


# -- the transport alone, against the fake ---------------------------------------------------


def _transport(fake: FakeFeishu, **overrides: Any) -> FeishuTransport:
    section = {
        "app_id": APP_ID,
        "app_secret": APP_SECRET,
        "verification_token": VERIFICATION_TOKEN,
        "api_base_url": fake.url,
        "retry_initial_s": 0.05,
        "retry_max_s": 0.2,
        **overrides,
    }
    return FeishuTransport(FeishuConfig.model_validate(section))


async def test_transport_threads_files_and_limits(fake: FakeFeishu):
    t = _transport(fake, reply_in_thread=True)
    try:
        group, root = new_chat(), "om_root_x"
        fake.chat_of[root] = group
        sent = await t.send(Target(group, root, is_group=True), t.render("# Title\na <b> & c"))
        (reply,) = fake.sent(group)
        assert reply.body["reply_in_thread"] is True and reply.body["root_id"] == root
        assert fake.texts(group) == ["**Title**\na &lt;b&gt; &amp; c"]
        await t.edit(sent, t.render("`x < y` stays code"))
        assert fake.texts(group)[-1] == "`x < y` stays code"
        await t.upload(Target(group, root, is_group=True), "slides.pdf", b"%PDF")
        (upload,) = [c for c in fake.of("upload") if c.body["file_name"] == "slides.pdf"]
        assert upload.body["file_type"] == "pdf"
        await t.upload(Target(group, root, is_group=True), "chart.PNG", b"\x89PNG")
        (image,) = [c for c in fake.sent(group) if c.body["msg_type"] == "image"]
        key = json.loads(image.body["content"])["image_key"]
        assert fake.uploads[key] == ("image", "chart.PNG", b"\x89PNG")
        assert image.body["root_id"] == root
        big = fake.message_event(chat_id=group, message_type="file", content={})
        mid = big["event"]["message"]["message_id"]
        fake.resources[(mid, "k_big")] = b"x" * 5000
        with pytest.raises(PlatformError, match="larger than"):
            await t.download(InboundFile("big.bin", f"{mid}/file/k_big"), 1000)
        with pytest.raises(PlatformError, match="code 234003"):
            await t.download(InboundFile("gone.bin", f"{mid}/file/k_missing"), 1000)
        with pytest.raises(PlatformError, match="not a Feishu file"):
            await t.download(InboundFile("x", "https://elsewhere/x"), 1000)
        # A topic thread inside a direct chat is a conversation of its own.
        t.bot_open_id = BOT_OPEN_ID
        event = fake.message_event(chat_id="oc_dm", text="hi", root_id="om_topic_root")
        event["event"]["message"]["thread_id"] = "omt_1"
        msg = t.parse("ev-x", event["event"])
        assert msg is not None and msg.topic_id == "om_topic_root" and not msg.is_group
        plain = t.parse("ev-y", fake.message_event(chat_id="oc_dm", text="hi")["event"])
        assert plain is not None and plain.topic_id is None and plain.chat_key == "oc_dm"
        other = fake.message_event(
            chat_id="oc_g",
            text="@_user_1 hi",
            chat_type="group",
            mentions=[mention("@_user_1", "ou_someone", "Someone")],
        )
        seen = t.parse("ev-z", other["event"])
        assert seen is not None and not seen.mentioned and seen.text == "@Someone hi"
        sticker = fake.message_event(chat_id="oc_dm", message_type="sticker", content={})
        assert t.parse("ev-s", sticker["event"]) is None
    finally:
        await t.stop()


# -- the long connection ---------------------------------------------------------------------


def test_frame_codec_matches_the_protobuf_runtime():
    frame = FRAME(SeqID=2**40, LogID=7, service=77, method=1, payload=b'{"a":1}')
    frame.headers.add(key="type", value="event")
    frame.headers.add(key="message_id", value="m-1")
    mine = decode(frame.SerializeToString())
    assert (mine.seq_id, mine.log_id, mine.service, mine.method) == (2**40, 7, 77, 1)
    assert mine.headers == [("type", "event"), ("message_id", "m-1")]
    assert mine.payload == b'{"a":1}' and mine.header("type") == "event"
    mine.headers.append(("biz_rt", "3"))
    mine.log_id_new = "L"
    back = FRAME()
    back.ParseFromString(encode(mine))
    assert [(h.key, h.value) for h in back.headers][-1] == ("biz_rt", "3")
    assert back.SeqID == 2**40 and back.payload == b'{"a":1}' and back.LogIDNew == "L"
    negative = FRAME(SeqID=0, LogID=0, service=-5, method=0)
    assert decode(negative.SerializeToString()).service == -5
    assert decode(encode(Frame(service=-5))).service == -5
    for bad in (b"\x08", b"\x0a\x05ab", b"\x0b"):
        with pytest.raises(FrameError):
            decode(bad)


async def test_long_connection_receives_acks_and_reconnects(tmp_path: Path):
    fake = FakeFeishu().start()
    cfg = config(fake)
    section = cfg["channels"]["feishu"]
    section["receive"] = "long_connection"
    del section["verification_token"], section["encrypt_key"]
    server = InProcessServer(tmp_path, cfg).start(timeout=120)
    try:
        connected = await asyncio.to_thread(fake.wait_for, lambda: fake.of("ws_connect"))
        assert connected[0].body["service_id"] == "77"
        await asyncio.to_thread(fake.wait_for, lambda: fake.of("ws_ping"))
        chat = new_chat()
        fake.push_event(fake.message_event(chat_id=chat, text="hello over the socket"), parts=3)
        await asyncio.to_thread(final_text, fake, chat, "How can I help")
        (ack,) = await asyncio.to_thread(fake.wait_for, lambda: fake.of("ws_ack"))
        assert ack.body["payload"] == {"code": 200} and "biz_rt" in ack.body["headers"]
        with server.http() as http:  # no callbacks in this mode
            assert http.post(EVENTS, json={"type": "url_verification"}).status_code == 404
        fake.drop_connection()
        await asyncio.to_thread(fake.wait_for, lambda: len(fake.of("ws_connect")) >= 2)
        fake.push_event(fake.message_event(chat_id=chat, text="second question"))
        await asyncio.to_thread(final_text, fake, chat, "The second answer.")
        assert "feishu long connection failed" in server.logs()
    finally:
        server.stop()
        fake.stop()


def test_webhook_mode_needs_the_verification_token():
    with pytest.raises(ValueError, match="verification_token is required"):
        FeishuConfig.model_validate({"app_id": "a", "app_secret": "s"})
    section = {"app_id": "a", "app_secret": "s", "receive": "long_connection"}
    ok = FeishuConfig.model_validate(section)
    assert ok.verification_token is None


async def test_long_connection_reports_refused_credentials(fake: FakeFeishu):
    reports: list[str] = []
    reported = asyncio.Event()

    def report(error: str) -> None:
        reports.append(error)
        reported.set()

    async def on_event(_event: Any) -> None:
        raise AssertionError("no event expected")

    async with httpx.AsyncClient() as client:
        conn = LongConnection(
            client, fake.url, APP_ID, "wrong-secret", Backoff(0.05, 0.2), on_event, report
        )
        task = asyncio.create_task(conn.run())
        try:
            await asyncio.wait_for(reported.wait(), 60)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    assert "code 514" in reports[0] and "wrong-secret" not in reports[0]
    assert conn.connects == 0
