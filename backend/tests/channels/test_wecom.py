"""WeCom end to end: callbacks encrypted and signed as WeCom does, sent at a real gateway
in-process with the scripted model; replies to a fake WeCom server API on loopback."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from channels.kit import (
    BUSY_GATE,
    FAST,
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
from fakes.wecom_server import (
    AES_KEY,
    AGENT_ID,
    CORP_ID,
    SECRET,
    TOKEN,
    FakeWeCom,
    delivery,
    url_check,
)
from pronghorn.channels.wecom.channel import split_bytes
from pronghorn.config.schema.channels import WeComConfig
from support.inproc import InProcessServer

CALLBACK = "/api/channels/wecom/callback"
LONG = long_text(12, 30) + "\n\n" + "中文段落。" * 300
RULES = [
    HELLO_RULE,
    {"match": "long", "steps": [{"text": LONG}]},
    {"match": "Files uploaded", "steps": [{"text": "Got your file."}]},
    *TAIL_RULES,
    OK,
]


def config(fake: FakeWeCom, *, access: str = "open") -> dict[str, Any]:
    section = {
        "corp_id": CORP_ID,
        "agent_id": AGENT_ID,
        "secret": SECRET,
        "token": TOKEN,
        "encoding_aes_key": AES_KEY,
        "api_base_url": fake.url,
        **FAST,
    }
    return scripted_config(
        [held_rule(fake), *RULES],
        tools=HOLD_TOOLS,
        channels={"access": {"mode": access}, "wecom": section},
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeWeCom]:
    yield from serving(FakeWeCom())


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeWeCom) -> Iterator[InProcessServer]:
    yield from gateway(tmp_path_factory.mktemp("wecom"), config(fake))


_users = iter(range(1, 100_000))


def new_user() -> str:
    return f"zhangsan{next(_users)}"


def post(srv: InProcessServer, xml: str, **kwargs: Any) -> httpx.Response:
    query, body = delivery(xml, **kwargs)
    with srv.http() as http:
        return http.post(CALLBACK, params=query, content=body)


def say(srv: InProcessServer, fake: FakeWeCom, user: str, text: str) -> None:
    response = post(srv, fake.message_xml(user=user, text=text))
    assert response.status_code == 200 and response.text == "", response.text


def threads_of(srv: InProcessServer, user: str) -> list[dict[str, Any]]:
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "wecom"}, "limit": 1000}
        ).json()
    return [t for t in threads if t["metadata"].get("chat") == user]


def status(srv: InProcessServer) -> dict[str, Any]:
    with srv.http() as http:
        (found,) = [s for s in http.get("/api/channels").json() if s["name"] == "wecom"]
    return found


# -- the callback envelope -------------------------------------------------------------------


def test_url_check_answers_the_decrypted_echo(srv: InProcessServer):
    with srv.http() as http:
        ok = http.get(CALLBACK, params=url_check("echo-4711"))
        assert ok.status_code == 200 and ok.text == "echo-4711"
        forged = http.get(CALLBACK, params=url_check("echo-4711", token="wrong"))
        assert forged.status_code == 401 and "signature" in forged.json()["detail"]
        missing = http.get(CALLBACK, params={"timestamp": "1", "nonce": "n"})
        assert missing.status_code == 400 and "echostr" in missing.json()["detail"]


def test_bad_envelopes_are_refused_and_reach_nothing(srv: InProcessServer, fake: FakeWeCom):
    user = new_user()
    before = status(srv)["counts"]["received"]
    xml = fake.message_xml(user=user, text="hello")
    assert post(srv, xml, token="wrong").status_code == 401
    assert post(srv, xml, corp_id="ww_other").status_code == 401  # sealed for another company
    other_key = "A" * 43
    assert post(srv, xml, aes_key=other_key).status_code == 401
    old = post(srv, xml, timestamp=int(time.time()) - 2 * 3600)
    assert old.status_code == 401 and "too old" in old.json()["detail"]
    query, body = delivery(xml)
    with srv.http() as http:
        assert http.post(CALLBACK, content=body).status_code == 401  # unsigned
        assert http.post(CALLBACK, params=query, content=b"not xml").status_code == 400
        dtd = b'<!DOCTYPE x [<!ENTITY a "b">]><xml><Encrypt>&a;</Encrypt></xml>'
        refused = http.post(CALLBACK, params=query, content=dtd)
        assert refused.status_code == 400 and "DTD" in refused.json()["detail"]
    assert status(srv)["counts"]["received"] == before
    assert fake.sent(user) == []


# -- conversations ---------------------------------------------------------------------------


def test_answer_arrives_as_markdown(srv: InProcessServer, fake: FakeWeCom):
    user = new_user()
    say(srv, fake, user, "hello bot")
    final = final_text(fake, user, "How can I help")
    assert "**friend**" in final  # WeCom renders Markdown: sent as written
    (sent,) = fake.sent(user)  # no placeholder: app messages cannot be edited
    assert sent.body["msgtype"] == "markdown" and sent.body["agentid"] == AGENT_ID


def test_callback_is_answered_at_once_while_the_run_is_in_flight(
    srv: InProcessServer, fake: FakeWeCom
):
    user = new_user()
    started = time.monotonic()
    say(srv, fake, user, "slow answer")  # the run waits on the gate; the callback does not
    assert time.monotonic() - started < 5
    fake.wait_for(lambda: [c for c in fake.of("gate")])
    say(srv, fake, user, "second question")
    final_text(fake, user, "Queued")
    fake.release(BUSY_GATE)
    final_text(fake, user, "Done, at last.")
    final_text(fake, user, "The second answer.")


def test_long_answer_is_split_within_wecoms_byte_limit(srv: InProcessServer, fake: FakeWeCom):
    user = new_user()
    say(srv, fake, user, "a long one")
    fake.wait_for(lambda: any("中文段落。" in t for t in fake.texts(user)))
    fake.wait_for(lambda: "".join(fake.texts(user)).count("中文段落。") == 300)
    texts = fake.texts(user)
    assert len(texts) >= 3 and all(len(t.encode()) <= 2048 for t in texts)
    assert "".join("".join(texts).split()) == "".join(LONG.split())


def test_redelivery_runs_once(srv: InProcessServer, fake: FakeWeCom):
    user = new_user()
    xml = fake.message_xml(user=user, text="hello twice")
    assert post(srv, xml).status_code == 200
    assert post(srv, xml).status_code == 200  # WeCom's retry: same MsgId, new nonce
    final_text(fake, user, "How can I help")
    fake.wait_for(lambda: status(srv)["counts"]["duplicates"] >= 1)
    assert len(fake.sent(user)) == 1


def test_files_both_ways(srv: InProcessServer, fake: FakeWeCom):
    user = new_user()
    say(srv, fake, user, "present the report")
    (file_msg,) = fake.wait_for(lambda: [c for c in fake.sent(user) if c.body["msgtype"] == "file"])
    assert fake.media[file_msg.body["file"]["media_id"]] == ("file", "report.md", b"# Report\n")
    final_text(fake, user, "Here is your report.")
    media = fake.add_media(b"\x89PNG\r\n\x1a\n an image")
    xml = fake.message_xml(user=user, msg_type="image", media_id=media)
    assert post(srv, xml).status_code == 200
    final_text(fake, user, "Got your file.")
    (thread,) = threads_of(srv, user)
    stored = {p.name: p for p in (srv.workdir / "data").rglob("*") if thread["thread_id"] in str(p)}
    # WeCom says nothing of the format: the name follows the bytes (a PNG, not "image.jpg")
    assert stored["image.png"].read_bytes() == b"\x89PNG\r\n\x1a\n an image"
    assert "image.jpg" not in stored


def test_clarification_round_trip(srv: InProcessServer, fake: FakeWeCom):
    user = new_user()
    say(srv, fake, user, "ask me something")
    question = final_text(fake, user, "Which format?")
    assert "2. Long" in question
    say(srv, fake, user, "2")
    final_text(fake, user, "Thanks, that settles it.")
    (thread,) = threads_of(srv, user)
    tool = [m for m in thread_state(srv, thread["thread_id"])["values"]["messages"]]
    assert [m for m in tool if m["type"] == "tool"][-1]["content"] == "Long"


def test_expired_token_is_renewed_and_a_rate_limit_waited_out(
    srv: InProcessServer, fake: FakeWeCom
):
    user = new_user()
    say(srv, fake, user, "hello one")
    final_text(fake, user, "How can I help")
    fetched = len(fake.of("gettoken"))
    fake.expire_tokens()
    fake.limited["send"] = 1
    say(srv, fake, user, "second question")
    final_text(fake, user, "The second answer.")
    assert len(fake.of("gettoken")) == fetched + 1 and fake.of("refused")
    assert fake.of("send!429")  # errcode 45009 once, then sent
    assert [t for t in fake.texts(user) if "second answer" in t] == ["The second answer."]


def test_unbound_user_gets_the_hint_then_binds_and_owns_the_thread(tmp_path: Path, fake: FakeWeCom):
    user = new_user()
    server = InProcessServer(tmp_path, config(fake, access="bound")).start(timeout=120)
    try:
        say(server, fake, user, "hello")
        assert "/connect CODE" in final_text(fake, user, "connect")
        with server.http() as http:
            code = http.post("/api/channels/wecom/connect").json()
        say(server, fake, user, f"/connect {code['code']}")
        final_text(fake, user, "Connected")
        say(server, fake, user, "hello again")
        final_text(fake, user, "How can I help")
        (thread,) = threads_of(server, user)
        assert thread["metadata"]["channel"] == "wecom"
        with server.http() as http:
            conns = http.get("/api/channels/connections").json()["connections"]
        (conn,) = [c for c in conns if c["external_id"] == user]
        assert conn["owner_id"] == "local" and conn["channel"] == "wecom"
    finally:
        server.stop()


# -- units -----------------------------------------------------------------------------------


def test_split_bytes_keeps_every_character_and_the_limit():
    text = "a" * 3000 + "\n" + "汉" * 1000
    pieces = split_bytes(text, 2048)
    assert "".join(pieces) == text and all(len(p.encode()) <= 2048 for p in pieces)


def test_config_checks_the_aes_key_length():
    base = {"corp_id": "c", "agent_id": 1, "secret": "s", "token": "t"}
    with pytest.raises(ValueError, match="43 characters"):
        WeComConfig.model_validate({**base, "encoding_aes_key": "short"})
    assert WeComConfig.model_validate({**base, "encoding_aes_key": AES_KEY}).agent_id == 1
