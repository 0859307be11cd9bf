"""Slack Socket Mode end to end: the fake Slack hands out a WebSocket URL and pushes
envelopes over it; a real gateway in-process with the scripted model acknowledges them and
replies through the fake Web API."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.kit import FAST, OK, gateway, scripted_config, serving
from channels.kit import settled_text as wait_text
from fakes.slack_server import APP_TOKEN, BOT_TOKEN, FakeSlack
from support.inproc import InProcessServer

HELLO = "Hi! **Nice** to meet you, how are things going today?"
RULES = [
    {"match": "hello", "steps": [{"text": HELLO}]},
    {"match": "again", "steps": [{"text": "Back again, still here."}]},
    OK,
]


def config(slack: FakeSlack, **extra: Any) -> dict[str, Any]:
    return scripted_config(
        RULES,
        channels={
            "access": {"mode": "open"},
            "slack": {
                "mode": "socket",
                "bot_token": BOT_TOKEN,
                "app_token": APP_TOKEN,
                "api_base_url": f"{slack.url}/api",
                **FAST,
                **extra,
            },
        },
    )


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    yield from serving(FakeSlack())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, slack: FakeSlack) -> Iterator[InProcessServer]:
    yield from gateway(tmp_path_factory.mktemp("slack-socket"), config(slack))


_n = iter(range(1, 100_000))


def message(text: str, *, user: str = "U1", channel: str = "D1") -> dict[str, Any]:
    n = next(_n)
    return {
        "type": "message",
        "user": user,
        "text": text,
        "channel": channel,
        "channel_type": "im",
        "ts": f"1764591000.{n:06d}",
    }


def runs_of(srv: InProcessServer, chat: str) -> list[dict[str, Any]]:
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "slack"}}
        ).json()
        (thread,) = [t for t in threads if t["metadata"]["chat"] == chat]
        return http.get(f"{srv.api}/threads/{thread['thread_id']}/runs").json()


def test_message_is_acked_and_the_reply_streams_by_edits(srv: InProcessServer, slack: FakeSlack):
    envelope = slack.socket_event(message("hello over the socket", channel="D10"))
    slack.wait_for(lambda: slack.acked(envelope))
    final = wait_text(slack, "D10", "how are things going today?")
    assert final == "Hi! *Nice* to meet you, how are things going today?"
    posts = [c for c in slack.of("chat.postMessage") if c.body["channel"] == "D10"]
    updates = [c for c in slack.of("chat.update") if c.body["channel"] == "D10"]
    assert len(posts) == 1 and posts[0].body["text"] == "…"  # one message, edited in place
    assert len(updates) >= 2 and any(u.body["text"].endswith(" …") for u in updates[:-1])
    assert len({u.body["ts"] for u in updates}) == 1
    # the acknowledgement is the envelope id alone, sent before the reply was posted
    (ack,) = [c for c in slack.of("ack") if c.body.get("envelope_id") == envelope["envelope_id"]]
    assert ack.body == {"envelope_id": envelope["envelope_id"]}
    assert slack.calls.index(ack) < slack.calls.index(posts[0])


def test_redelivered_envelope_runs_once(srv: InProcessServer, slack: FakeSlack):
    first = slack.socket_event(message("hello twice", channel="D11"))
    again = slack.redeliver(first)
    slack.wait_for(lambda: slack.acked(first) and slack.acked(again))
    wait_text(slack, "D11", "how are things going today?")
    slack.socket_event(message("again please", channel="D11"))  # a later message still runs
    wait_text(slack, "D11", "Back again")
    assert len(runs_of(srv, "D11")) == 2
    posts = [c for c in slack.of("chat.postMessage") if c.body["channel"] == "D11"]
    assert len(posts) == 2  # one placeholder per run, none for the redelivery


def test_slash_commands(srv: InProcessServer, slack: FakeSlack):
    status = slack.slash_command("/status", "", user="U12", channel="D12")
    slack.wait_for(lambda: slack.acked(status))
    wait_text(slack, "D12", "No conversation yet")
    chat = slack.slash_command("/pronghorn", "hello from a command", user="U12", channel="D12")
    slack.wait_for(lambda: slack.acked(chat))
    wait_text(slack, "D12", "how are things going today?")
    slack.slash_command("/pronghorn", "/status", user="U12", channel="D12")
    wait_text(slack, "D12", "Conversation ")
    assert len(runs_of(srv, "D12")) == 1


def test_disconnect_then_drop_reconnect_and_carry_on(srv: InProcessServer, slack: FakeSlack):
    opened = slack.open_sessions()
    slack.disconnect()
    slack.wait_for(lambda: slack.open_sessions() > opened)  # a fresh URL, a new socket
    envelope = slack.socket_event(message("hello after the move", channel="D13"))
    slack.wait_for(lambda: slack.acked(envelope))
    wait_text(slack, "D13", "how are things going today?")

    opened = slack.open_sessions()
    slack.drop()
    slack.wait_for(lambda: slack.open_sessions() > opened)  # backoff, then a new socket
    envelope = slack.socket_event(message("again after the drop", channel="D13"))
    slack.wait_for(lambda: slack.acked(envelope))
    wait_text(slack, "D13", "Back again")
    assert len(slack.of("apps.connections.open")) == len(slack.of("hello"))  # one URL each
    with srv.http() as http:
        (status,) = http.get("/api/channels").json()
    assert status["running"] and "socket" in (status["last_error"] or "")
    assert APP_TOKEN not in str(status) and "ticket" not in str(status)


def test_webhook_is_refused_in_socket_mode(srv: InProcessServer, slack: FakeSlack):
    # The channel runs once its receiver holds the lease and opened its socket; asked
    # before that (this test first in the module), the route says it is not running (404).
    slack.wait_for(lambda: slack.open_sessions() > 0)
    with srv.http() as http:
        r = http.post("/api/channels/slack/events", json={"type": "url_verification"})
    assert r.status_code == 401 and "Socket Mode" in r.json()["detail"]


def test_slack_down_retries_then_connects(tmp_path: Path):
    slack = FakeSlack().start()
    slack.down = True
    server = InProcessServer(tmp_path, config(slack)).start(timeout=120)
    try:
        deadline = time.monotonic() + 60
        with server.http() as http:
            while True:
                (status,) = http.get("/api/channels").json()
                # the receiver starts once it holds the channel's lease: no counts until then
                errors = status.get("counts", {}).get("errors", 0)
                if errors >= 3 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert http.get("/health").status_code == 200
        assert status["counts"]["errors"] >= 3 and "503" in status["last_error"]
        assert "slack socket failed" in server.logs() and APP_TOKEN not in server.logs()
        slack.down = False
        envelope = slack.socket_event(message("hello once up", channel="D14"))
        slack.wait_for(lambda: slack.acked(envelope))
        wait_text(slack, "D14", "how are things going today?")
    finally:
        server.stop()
        slack.stop()


def test_config_needs_the_token_of_its_mode():
    from pydantic import ValidationError

    from pronghorn.config.schema.channels import SlackConfig

    with pytest.raises(ValidationError, match="app_token"):
        SlackConfig.model_validate({"mode": "socket", "bot_token": "xoxb-1"})
    with pytest.raises(ValidationError, match="signing_secret"):
        SlackConfig.model_validate({"bot_token": "xoxb-1"})
    ok = SlackConfig.model_validate({"mode": "socket", "bot_token": "x", "app_token": "xapp-1"})
    assert ok.signing_secret is None and "xapp-1" not in repr(ok)
