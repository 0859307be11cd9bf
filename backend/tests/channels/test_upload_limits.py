"""Files sent in a chat are stored like web uploads: the thread's total and per-file upload
limits (`uploads.*`) hold, a refused file is named in the chat with the reason, and a taken
name is numbered as over HTTP (`a (1).txt`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from channels.kit import (
    HELLO_RULE,
    OK,
    final_text,
    gateway,
    scripted_config,
    serving,
    telegram_section,
    telegram_threads,
)
from fakes.telegram_server import FakeTelegram
from support.inproc import InProcessServer

UPLOADS = {"max_file_bytes": 20, "max_total_bytes": 30, "convert": {"enabled": False}}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    yield from serving(FakeTelegram())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeTelegram) -> Iterator[InProcessServer]:
    cfg = scripted_config(
        [HELLO_RULE, OK],
        channels={"access": {"mode": "open"}, "telegram": telegram_section(fake)},
        uploads=UPLOADS,
    )
    yield from gateway(tmp_path_factory.mktemp("tg-limits"), cfg)


def uploads(srv: InProcessServer, user: int) -> dict[str, int]:
    (thread,) = telegram_threads(srv, user)
    with srv.http() as http:
        listing: dict[str, Any] = http.get(f"/api/threads/{thread['thread_id']}/uploads").json()
    return {f["name"]: f["size"] for f in listing["files"]}


def test_a_file_over_the_thread_total_is_refused_clearly(
    srv: InProcessServer, fake: FakeTelegram
) -> None:
    user = 501
    fake.user_message("hello, one", user_id=user, document=("a.txt", b"x" * 20))
    final_text(fake, user, "How can I help")
    fake.user_message("hello, two", user_id=user, document=("b.txt", b"y" * 20))
    said = final_text(fake, user, "Could not receive b.txt")
    assert "total upload limit (10 bytes left)" in said
    (thread,) = telegram_threads(srv, user)
    with srv.http() as http:  # the same name over HTTP, then in the chat: numbered alike
        r = http.post(
            f"/api/threads/{thread['thread_id']}/uploads", files={"files": ("n.txt", b"1")}
        )
        assert r.status_code == 200, r.text
    fake.user_message("hello, three", user_id=user, document=("n.txt", b"z" * 5))
    fake.wait_for(lambda: "n (1).txt" in uploads(srv, user))
    assert uploads(srv, user) == {"a.txt": 20, "n.txt": 1, "n (1).txt": 5}  # b.txt: nothing kept


def test_a_file_over_the_per_file_limit_is_refused_clearly(
    srv: InProcessServer, fake: FakeTelegram
) -> None:
    user = 502
    fake.user_message("hello, big", user_id=user, document=("big.txt", b"x" * 21))
    said = final_text(fake, user, "Could not receive big.txt")
    assert "per-file upload limit of 20 bytes" in said
    final_text(fake, user, "How can I help")  # the turn still ran
    assert uploads(srv, user) == {}
