"""The channels config API through a real gateway: masked secrets round-trip into
config.yaml (comments kept), bad input is a 400 naming the field with nothing written, and
a saved section hot-reloads that channel only (Telegram long-polls the fake at once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from channels.kit import OK, gateway, scripted_config, serving
from channels.kit import until as _until
from fakes.dingtalk_server import CLIENT_ID, CLIENT_SECRET, FakeDingTalk
from fakes.telegram_server import TOKEN, FakeTelegram
from fakes.wecom_server import AES_KEY, AGENT_ID, CORP_ID, SECRET
from fakes.wecom_server import TOKEN as WECOM_TOKEN
from pronghorn.config.file_marks import HEAD
from support.inproc import InProcessServer

SLACK = {"bot_token": "xoxb-slack-secret", "signing_secret": "slack-signing-secret"}


@pytest.fixture
def fake() -> Iterator[FakeTelegram]:
    yield from serving(FakeTelegram())


@pytest.fixture
def srv(
    tmp_path: Path, fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InProcessServer]:
    monkeypatch.setenv("TG_TOKEN_FOR_TEST", TOKEN)
    cfg = scripted_config(
        [OK],
        channels={
            "access": {"mode": "open"},
            "slack": {**SLACK, "api_base_url": f"{fake.url}/slack"},
        },
    )
    yield from gateway(tmp_path, cfg)


def _status(http: Any, name: str) -> dict[str, Any]:
    return next(c for c in http.get("/api/channels").json() if c["name"] == name)


def test_config_api_masks_round_trips_and_restarts_only_that_channel(
    srv: InProcessServer, fake: FakeTelegram
):
    srv.config_path.write_text("# keep this comment\n" + srv.config_path.read_text())
    with srv.http() as http:
        view = http.get("/api/channels/config").json()
        by_name = {c["name"]: c for c in view["channels"]}
        assert {"telegram", "slack"} <= set(by_name) and view["writable"] is True
        assert by_name["telegram"]["configured"] is False
        slack = by_name["slack"]
        assert slack["config"]["bot_token"] == "***" and slack["config"]["signing_secret"] == "***"
        assert "xoxb-slack-secret" not in str(view)
        assert set(slack["secrets"]) == {"bot_token", "signing_secret", "app_token"}
        schema = by_name["telegram"]["schema"]
        assert schema["properties"]["bot_token"]["format"] == "password"
        assert "bot_token" in schema["required"]
        slack_starts = _status(http, "slack")["starts"]

        # enable Telegram with a literal token: written, reloaded, polling the fake at once
        section = {"bot_token": TOKEN, "api_base_url": fake.url, "poll_timeout_s": 1}
        r = http.put("/api/channels/telegram/config", json={"config": section})
        assert r.status_code == 200, r.text
        tg = next(c for c in r.json()["channels"] if c["name"] == "telegram")
        assert tg["configured"] and tg["config"]["bot_token"] == "***"
        on_disk = srv.config_path.read_text()
        assert on_disk.startswith(f"{HEAD}\n# keep this comment\n")  # marked, comment kept
        assert yaml.safe_load(on_disk)["channels"]["telegram"]["bot_token"] == TOKEN
        assert _until(lambda: _status(http, "telegram")["running"])
        fake.wait_for(lambda: fake.of("getUpdates"))
        assert _status(http, "slack")["starts"] == slack_starts  # untouched

        # the masked view back with one change keeps the secret; the channel restarts
        tg_starts = _status(http, "telegram")["starts"]
        changed = {**tg["config"], "poll_timeout_s": 2}
        r = http.put("/api/channels/telegram/config", json={"config": changed})
        assert r.status_code == 200, r.text
        stored = yaml.safe_load(srv.config_path.read_text())["channels"]["telegram"]
        assert stored["bot_token"] == TOKEN and stored["poll_timeout_s"] == 2
        assert _until(lambda: _status(http, "telegram")["starts"] == tg_starts + 1)
        assert _status(http, "slack")["starts"] == slack_starts

        # ${VAR} is written and shown as given; the live config has its value
        r = http.put(
            "/api/channels/telegram/config",
            json={"config": {**changed, "bot_token": "${TG_TOKEN_FOR_TEST}"}},
        )
        assert r.status_code == 200, r.text
        tg = next(c for c in r.json()["channels"] if c["name"] == "telegram")
        assert tg["config"]["bot_token"] == "${TG_TOKEN_FOR_TEST}"

        # bad input: 400 naming the field, nothing written
        before = srv.config_path.read_text()
        bad = http.put(
            "/api/channels/telegram/config", json={"config": {**changed, "poll_timeout_s": 99}}
        )
        assert bad.status_code == 400 and "channels.telegram.poll_timeout_s" in bad.text
        unknown = http.put("/api/channels/telegram/config", json={"config": {**changed, "nope": 1}})
        assert unknown.status_code == 400 and "channels.telegram.nope" in unknown.text
        missing = http.put("/api/channels/telegram/config", json={"config": {"enabled": True}})
        assert missing.status_code == 400 and "channels.telegram.bot_token" in missing.text
        masked = http.put(
            "/api/channels/slack/config",
            json={"config": {"bot_token": "***", "signing_secret": "***", "nope_secret": 1}},
        )
        assert masked.status_code == 400
        assert srv.config_path.read_text() == before
        assert http.put("/api/channels/nosuch/config", json={"config": {}}).status_code == 404

        # disabling: the section stays, the channel stops
        r = http.put(
            "/api/channels/telegram/config", json={"config": {**tg["config"], "enabled": False}}
        )
        assert r.status_code == 200, r.text
        assert _until(lambda: not _status(http, "telegram")["running"])
        assert (
            _status(http, "slack")["running"] and _status(http, "slack")["starts"] == slack_starts
        )


def test_a_mask_with_nothing_stored_is_refused(srv: InProcessServer):
    with srv.http() as http:
        before = srv.config_path.read_text()
        r = http.put("/api/channels/telegram/config", json={"config": {"bot_token": "***"}})
        assert r.status_code == 400
        assert "channels.telegram.bot_token: '***' but no stored value" in r.json()["detail"]
        assert srv.config_path.read_text() == before


def test_nested_secrets_are_found_masked_and_kept():
    from pydantic import BaseModel, SecretStr

    from pronghorn.gateway.routers.channels_config import _masked, secret_fields

    class Crypto(BaseModel):
        encrypt_key: SecretStr
        mode: str = "aes"

    class Section(BaseModel):
        app_secret: SecretStr
        crypto: Crypto | None = None

    paths = secret_fields(Section)
    assert paths == ["app_secret", "crypto.encrypt_key"]
    shown = _masked({"app_secret": "s1", "crypto": {"encrypt_key": "k1", "mode": "aes"}}, paths)
    assert shown == {"app_secret": "***", "crypto": {"encrypt_key": "***", "mode": "aes"}}
    assert _masked({"app_secret": "${APP_SECRET}"}, paths) == {"app_secret": "${APP_SECRET}"}


def test_dingtalk_and_wecom_sections_are_offered_and_hot_reload(srv: InProcessServer):
    ding = FakeDingTalk().start()
    try:
        with srv.http() as http:
            by_name = {c["name"]: c for c in http.get("/api/channels/config").json()["channels"]}
            assert by_name["dingtalk"]["configured"] is False
            assert set(by_name["dingtalk"]["secrets"]) == {"client_secret"}
            assert set(by_name["wecom"]["secrets"]) == {"secret", "token", "encoding_aes_key"}
            section = {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "api_base_url": ding.url,
                "oapi_base_url": ding.url,
            }
            r = http.put("/api/channels/dingtalk/config", json={"config": section})
            assert r.status_code == 200, r.text
            ding.wait_for(lambda: ding.of("ws_connect"))  # reloaded: the stream is open
            bad = {"corp_id": CORP_ID, "agent_id": AGENT_ID, "secret": SECRET}
            r = http.put("/api/channels/wecom/config", json={"config": bad})
            assert r.status_code == 400 and "channels.wecom" in r.json()["detail"]
            wecom = {**bad, "token": WECOM_TOKEN, "encoding_aes_key": AES_KEY}
            r = http.put("/api/channels/wecom/config", json={"config": wecom})
            assert r.status_code == 200, r.text
            assert _until(lambda: _status(http, "wecom")["running"])
            view = http.get("/api/channels/config").json()
            assert SECRET not in str(view) and CLIENT_SECRET not in str(view)
    finally:
        ding.stop()
