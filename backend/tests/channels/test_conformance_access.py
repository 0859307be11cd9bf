"""The channel conformance suite's access modes other than `bound` (test_conformance.py runs
that one): `open` lets anyone in, `allowlist` only the listed platform users, and in both a
user bound with `/connect` is let in as their Pronghorn user. One gateway per mode runs all
six channels against their fakes (channels/platforms.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from channels.kit import OK, scripted_config
from channels.platforms import ALL, Chat, Platform
from channels.test_conformance import HELLO, settled, start_gateway
from support.inproc import InProcessServer

LISTED = 990_001  # the fixed chat whose user the allow-list names
NAMES = [cls.name for cls in ALL]


@pytest.fixture(scope="module", params=["open", "allowlist"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def platforms(mode: str) -> Iterator[dict[str, Platform]]:
    made = {cls.name: cls() for cls in ALL}
    for platform in made.values():
        platform.fake.start()
    yield made
    for platform in made.values():
        platform.fake.stop()


@pytest.fixture(scope="module")
def srv(
    tmp_path_factory: pytest.TempPathFactory, mode: str, platforms: dict[str, Platform]
) -> Iterator[InProcessServer]:
    listed = [p.chat(LISTED).user for p in platforms.values()]
    cfg = scripted_config(
        [{"match": "hello", "steps": [{"text": HELLO}]}, OK],
        channels={
            "access": {"mode": mode, "users": listed},
            **{name: {**p.section(), "retry_max_s": 2} for name, p in platforms.items()},
        },
    )
    server = start_gateway(tmp_path_factory.mktemp(f"access-{mode}"), cfg, platforms)
    yield server
    server.stop()


@pytest.fixture(params=NAMES)
def p(
    request: pytest.FixtureRequest, platforms: dict[str, Platform], srv: InProcessServer
) -> Platform:
    return platforms[str(request.param)]


def threads_of(srv: InProcessServer, p: Platform, chat: Chat) -> list[dict[str, Any]]:
    with srv.http() as http:
        found = http.post(
            f"{srv.api}/threads/search",
            json={"metadata": {"channel": p.name}, "limit": 1000},
        ).json()
    return [t for t in found if t["metadata"].get("chat") == chat.key]


def bindings(srv: InProcessServer, p: Platform, chat: Chat) -> list[dict[str, Any]]:
    with srv.http() as http:
        conns = http.get("/api/channels/connections").json()["connections"]
    return [c for c in conns if c["channel"] == p.name and c["external_id"] == chat.user]


def test_an_unlisted_unbound_user(srv: InProcessServer, mode: str, p: Platform):
    """`open`: answered, as a guest (no binding); `allowlist`: refused, nothing run."""
    chat = p.chat()
    p.say(chat, "hello there")
    if mode == "open":
        settled(p, chat, "How can I help")
        (thread,) = threads_of(srv, p, chat)
        assert thread["metadata"]["channel"] == p.name
    else:
        settled(p, chat, "not allowed to use this bot")
        assert threads_of(srv, p, chat) == []
        assert not [t for t in p.texts(chat) if "How can I help" in t]
    assert bindings(srv, p, chat) == []


def test_a_listed_user_is_answered_without_binding(srv: InProcessServer, p: Platform):
    chat = p.chat(LISTED)
    p.say(chat, "hello from the list")
    settled(p, chat, "How can I help")
    assert len(threads_of(srv, p, chat)) == 1
    assert bindings(srv, p, chat) == []


def test_a_bound_user_is_let_in_whatever_the_list(srv: InProcessServer, p: Platform):
    chat = p.chat()
    with srv.http() as http:
        code = http.post(f"/api/channels/{p.name}/connect").json()["code"]
    p.say(chat, f"/connect {code}")  # redeemed before the allow-list is consulted
    settled(p, chat, "Connected")
    p.say(chat, "hello as myself")
    settled(p, chat, "How can I help")
    (binding,) = bindings(srv, p, chat)
    assert binding["owner_id"] == "local"
    (thread,) = threads_of(srv, p, chat)
    assert thread["metadata"]["channel"] == p.name
