"""Platform rate limits, end to end: the fakes answer 429 (Telegram's `retry_after` in the
body, Slack's `Retry-After` header); the gateway waits as asked and retries sends and edits,
coalesces streaming edits that keep being refused, and never loses the final answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from channels.kit import FAST, OK, gateway, scripted_config, serving
from fakes.platform_base import Call, PlatformServer
from fakes.slack_server import APP_TOKEN, BOT_TOKEN, FakeSlack
from fakes.telegram_server import TOKEN, FakeTelegram
from support.inproc import InProcessServer

HELLO = "Hello there, friend! How can I help you today with your question?"
SLOW = "slowly " * 60
RULES = [
    {"match": "hello", "steps": [{"text": HELLO}]},
    {"match": "slow", "steps": [{"text": SLOW, "delay_s": 0.05}]},
    OK,
]
COMMON = {**FAST, "retry_max_s": 2}  # a cap above the retry-after the fakes ask for


def config(**channels: Any) -> dict[str, Any]:
    return scripted_config(RULES, channels={"access": {"mode": "open"}, **channels})


@pytest.fixture(scope="module")
def tg() -> Iterator[FakeTelegram]:
    yield from serving(FakeTelegram())


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    yield from serving(FakeSlack())


@pytest.fixture(scope="module")
def srv(
    tmp_path_factory: pytest.TempPathFactory, tg: FakeTelegram, slack: FakeSlack
) -> Iterator[InProcessServer]:
    cfg = config(
        telegram={"bot_token": TOKEN, "api_base_url": tg.url, "poll_timeout_s": 5, **COMMON},
        slack={
            "mode": "socket",
            "bot_token": BOT_TOKEN,
            "app_token": APP_TOKEN,
            "api_base_url": f"{slack.url}/api",
            **COMMON,
        },
    )
    yield from gateway(tmp_path_factory.mktemp("limits"), cfg)


_ids = iter(range(50_000, 60_000))


def for_chat(fake: PlatformServer, method: str, key: str, chat: str) -> list[Call]:
    return [c for c in fake.of(method) if str(c.body.get(key)) == chat]


def waited_after_429(fake: PlatformServer, method: str, key: str, chat: str) -> float:
    """Seconds between the refused call and the next accepted one of that chat."""
    (refused,) = for_chat(fake, f"{method}!429", key, chat)
    later = [c for c in for_chat(fake, method, key, chat) if c.at > refused.at]
    assert later, f"{method} was never retried"
    return later[0].at - refused.at


def test_telegram_429_once_on_send_and_edit_is_waited_out(srv: InProcessServer, tg: FakeTelegram):
    user = next(_ids)
    tg.retry_after = 1
    tg.limited.update({"sendMessage": 1, "editMessageText": 1})
    tg.user_message("hello there", user_id=user)
    chat = str(user)
    tg.wait_for(
        lambda: any(
            c.body["text"] == HELLO for c in for_chat(tg, "editMessageText", "chat_id", chat)
        )
    )
    assert waited_after_429(tg, "sendMessage", "chat_id", chat) >= 0.9
    assert waited_after_429(tg, "editMessageText", "chat_id", chat) >= 0.9
    sent = for_chat(tg, "sendMessage", "chat_id", chat)
    assert [c.body["text"] for c in sent] == ["…"]  # one placeholder, no duplicate message
    assert for_chat(tg, "editMessageText", "chat_id", chat)[-1].body["text"] == HELLO


def test_telegram_edits_that_keep_hitting_limits_coalesce_and_the_answer_arrives(
    srv: InProcessServer, tg: FakeTelegram
):
    user = next(_ids)
    chat = str(user)
    tg.retry_after = 1
    tg.limited["editMessageText"] = 10**6
    try:
        tg.user_message("a slow answer", user_id=user)
        final = SLOW.strip()
        tg.wait_for(
            lambda: any(
                c.body["text"] == final for c in for_chat(tg, "sendMessage", "chat_id", chat)
            )
        )
    finally:
        tg.limited["editMessageText"] = 0
    refused = for_chat(tg, "editMessageText!429", "chat_id", chat)
    assert refused and not for_chat(tg, "editMessageText", "chat_id", chat)
    assert len(refused) < 40  # 60 streamed chunks, far fewer edit attempts: coalesced
    texts = [c.body["text"] for c in for_chat(tg, "sendMessage", "chat_id", chat)]
    assert texts == ["…", final]  # the final answer, sent once as a new message


def test_slack_429_once_on_post_then_updates_always_limited(srv: InProcessServer, slack: FakeSlack):
    channel = f"D{next(_ids)}"
    n = next(_ids)
    slack.retry_after = 1
    slack.limited.update({"chat.postMessage": 1, "chat.update": 10**6})
    try:
        event = {
            "type": "message",
            "user": "U1",
            "text": "hello slack",
            "channel": channel,
            "channel_type": "im",
            "ts": f"1764592000.{n:06d}",
        }
        slack.socket_event(event)
        final = HELLO
        slack.wait_for(
            lambda: any(
                c.body["text"] == final
                for c in for_chat(slack, "chat.postMessage", "channel", channel)
            )
        )
    finally:
        slack.limited.clear()
    assert waited_after_429(slack, "chat.postMessage", "channel", channel) >= 0.9
    posts = [c.body["text"] for c in for_chat(slack, "chat.postMessage", "channel", channel)]
    assert posts == ["…", final]
    assert for_chat(slack, "chat.update!429", "channel", channel)
    assert not for_chat(slack, "chat.update", "channel", channel)
