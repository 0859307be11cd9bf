"""Slack end to end: signed Events API requests to a real gateway in-process, replies to a
fake Slack Web API on loopback; also binding by code, and a reload restarting one channel."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from channels.kit import OK, OUT, call, gateway, scripted_config
from fakes.slack_server import BOT_TOKEN, BOT_USER, SIGNING_SECRET, FakeSlack
from fakes.telegram_server import TOKEN, FakeTelegram
from pronghorn.channels.slack.channel import sign
from support.inproc import InProcessServer

EVENTS = "/api/channels/slack/events"
RULES = [
    {"match": "hello", "steps": [{"text": "Hi! **Nice** to meet you, how are things going?"}]},
    {
        "match": "present",
        "steps": [
            call("write_file", description="w", path=f"{OUT}/a.txt", content="A"),
            call("present_files", filepaths=[f"{OUT}/a.txt"]),
            {"text": "Sent the file."},
        ],
    },
    {
        "match": "ask me",
        "steps": [
            call("ask_clarification", question="Which format?", options=["Short", "Long"]),
            {"text": "Thanks, that settles it."},
        ],
    },
    OK,
]


def config(slack: FakeSlack, tg: FakeTelegram, access: str = "open") -> dict[str, Any]:
    return scripted_config(
        RULES,
        channels={
            "access": {"mode": access},
            "slack": {
                "bot_token": BOT_TOKEN,
                "signing_secret": SIGNING_SECRET,
                "api_base_url": f"{slack.url}/api",
                "edit_interval_s": 0.05,
                "retry_initial_s": 0.05,
            },
            "telegram": {"bot_token": TOKEN, "api_base_url": tg.url, "poll_timeout_s": 5},
        },
    )


@pytest.fixture(scope="module")
def fakes() -> Iterator[tuple[FakeSlack, FakeTelegram]]:
    slack, tg = FakeSlack().start(), FakeTelegram().start()
    yield slack, tg
    slack.stop()
    tg.stop()


@pytest.fixture(scope="module")
def srv(
    tmp_path_factory: pytest.TempPathFactory, fakes: tuple[FakeSlack, FakeTelegram]
) -> Iterator[InProcessServer]:
    yield from gateway(tmp_path_factory.mktemp("slack"), config(*fakes, access="bound"))


_ts = iter(range(1, 100_000))


def event(
    text: str, *, user: str = "U1", channel: str = "D1", channel_type: str = "im", **extra: Any
) -> dict[str, Any]:
    n = next(_ts)
    return {
        "type": "event_callback",
        "event_id": f"Ev{n}",
        "event": {
            "type": "message",
            "user": user,
            "text": text,
            "channel": channel,
            "channel_type": channel_type,
            "ts": f"1764590000.{n:06d}",
            **extra,
        },
    }


def post(
    srv: InProcessServer,
    payload: dict[str, Any],
    *,
    secret: str = SIGNING_SECRET,
    ts: int | None = None,
) -> Any:
    body = json.dumps(payload).encode()
    stamp = str(ts if ts is not None else int(time.time()))
    headers = {
        "content-type": "application/json",
        "x-slack-request-timestamp": stamp,
        "x-slack-signature": sign(secret, stamp, body),
    }
    with srv.http() as http:
        return http.post(EVENTS, content=body, headers=headers)


def wait_text(slack: FakeSlack, channel: str, contains: str) -> str:
    return slack.wait_for(
        lambda: next(
            (t for t in reversed(slack.texts(channel)) if contains in t and not t.endswith(" …")),
            None,
        )
    )


def test_url_verification_and_bad_signature(srv: InProcessServer):
    ok = post(srv, {"type": "url_verification", "challenge": "abc123", "token": "x"})
    assert ok.status_code == 200 and ok.json() == {"challenge": "abc123"}
    bad = post(srv, {"type": "url_verification", "challenge": "abc123"}, secret="wrong")
    assert bad.status_code == 401 and "signature" in bad.json()["detail"]
    old = post(srv, {"type": "url_verification", "challenge": "x"}, ts=int(time.time()) - 3600)
    assert old.status_code == 401
    with srv.http() as http:
        unsigned = http.post(EVENTS, json={"type": "url_verification", "challenge": "x"})
    assert unsigned.status_code == 401


def test_unbound_user_gets_the_hint_then_binds_and_owns_the_thread(
    srv: InProcessServer, fakes: tuple[FakeSlack, FakeTelegram]
):
    slack, _ = fakes
    assert post(srv, event("hello", user="U7", channel="D7")).status_code == 200
    hint = wait_text(slack, "D7", "connect")
    assert "/connect CODE" in hint
    with srv.http() as http:
        code = http.post("/api/channels/slack/connect").json()
        assert http.post("/api/channels/nope/connect").status_code == 404
    assert code["command"] == f"/connect {code['code']}"
    post(srv, event(f"/connect {code['code']}", user="U7", channel="D7"))
    wait_text(slack, "D7", "Connected")
    post(srv, event(f"/connect {code['code']}", user="U8", channel="D8"))  # used once only
    wait_text(slack, "D8", "not valid")
    post(srv, event("hello again", user="U7", channel="D7"))
    final = wait_text(slack, "D7", "Nice")
    assert final == "Hi! *Nice* to meet you, how are things going?"
    updates = [c for c in slack.of("chat.update") if c.body["channel"] == "D7"]
    assert updates  # streamed by editing the placeholder
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "slack"}}
        ).json()
        (thread,) = [t for t in threads if t["metadata"]["chat"] == "D7"]
        runs = http.get(f"{srv.api}/threads/{thread['thread_id']}/runs").json()
        conns = http.get("/api/channels/connections").json()["connections"]
    assert runs and all(r["metadata"].get("channel") == "slack" for r in runs)
    (conn,) = [c for c in conns if c["external_id"] == "U7"]
    assert conn["owner_id"] == "local"
    with srv.http() as http:
        assert http.delete(f"/api/channels/connections/{conn['id']}").status_code == 204
        assert http.delete(f"/api/channels/connections/{conn['id']}").status_code == 404
    post(srv, event("hello once more", user="U7", channel="D7"))
    slack.wait_for(lambda: sum("/connect CODE" in t for t in slack.texts("D7")) >= 2)


def test_channel_message_replies_in_thread_with_file(
    srv: InProcessServer, fakes: tuple[FakeSlack, FakeTelegram]
):
    slack, _ = fakes
    with srv.http() as http:
        code = http.post("/api/channels/slack/connect").json()["code"]
    post(srv, event(f"/connect {code}", user="U9", channel="D9"))
    wait_text(slack, "D9", "Connected")
    mention = event(
        f"<@{BOT_USER}> please present it", user="U9", channel="C1", channel_type="channel"
    )
    mention["event"]["type"] = "app_mention"
    post(srv, mention)
    post(srv, mention)  # a redelivery: answered once
    slack.wait_for(lambda: slack.of("files.completeUploadExternal"))
    wait_text(slack, "C1", "Sent the file.")
    (name, data), *_ = slack.uploads.values()
    assert (name, data) == ("a.txt", b"A")
    posts = [c for c in slack.of("chat.postMessage") if c.body["channel"] == "C1"]
    assert len(posts) == 1 and posts[0].body["thread_ts"] == mention["event"]["ts"]
    (done,) = slack.of("files.completeUploadExternal")
    assert done.body["channel_id"] == "C1" and done.body["thread_ts"] == mention["event"]["ts"]
    bot = event("hello from me", user=BOT_USER, channel="D9", bot_id="B1")
    post(srv, bot)


def test_reload_restarts_only_the_changed_channel(
    srv: InProcessServer, fakes: tuple[FakeSlack, FakeTelegram]
):
    _slack, _tg = fakes
    with srv.http() as http:
        before = {c["name"]: c["starts"] for c in http.get("/api/channels").json()}
    cfg = yaml.safe_load(srv.config_path.read_text())
    cfg["channels"]["telegram"]["poll_timeout_s"] = 6
    srv.write_config(cfg)
    deadline = time.monotonic() + 60
    with srv.http() as http:
        while True:
            after = {c["name"]: c["starts"] for c in http.get("/api/channels").json()}
            if after["telegram"] > before["telegram"] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert http.post("/api/channels/slack/restart").status_code == 200
        final = {c["name"]: c for c in http.get("/api/channels").json()}
    assert after == {"telegram": before["telegram"] + 1, "slack": before["slack"]}
    assert final["slack"]["starts"] == before["slack"] + 1 and final["slack"]["running"]


def test_group_plain_reply_answers_the_clarification(
    srv: InProcessServer, fakes: tuple[FakeSlack, FakeTelegram]
):
    slack, _ = fakes
    for user in ("U21", "U22"):
        with srv.http() as http:
            code = http.post("/api/channels/slack/connect").json()["code"]
        post(srv, event(f"/connect {code}", user=user, channel=f"D{user}"))
        wait_text(slack, f"D{user}", "Connected")
    ask = event(
        f"<@{BOT_USER}> ask me something", user="U21", channel="C21", channel_type="channel"
    )
    ask["event"]["type"] = "app_mention"
    post(srv, ask)
    wait_text(slack, "C21", "Which format?")
    root = ask["event"]["ts"]
    # Another member's plain message: not for the bot (mention_only). The asker's plain
    # message in the channel (not in the Slack thread): the answer, in the question's thread.
    post(srv, event("2", user="U22", channel="C21", channel_type="channel"))
    post(srv, event("2", user="U21", channel="C21", channel_type="channel"))
    wait_text(slack, "C21", "Thanks, that settles it.")
    posts = [c for c in slack.of("chat.postMessage") if c.body["channel"] == "C21"]
    assert posts and all(c.body.get("thread_ts") == root for c in posts)
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "slack"}, "limit": 1000}
        ).json()
    (thread,) = [t for t in threads if str(t["metadata"].get("chat", "")).startswith("C21")]
    with srv.http() as http:
        state = http.get(f"{srv.api}/threads/{thread['thread_id']}/state").json()
    tool = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    assert tool[-1]["content"] == "Long"
