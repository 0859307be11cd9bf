"""DeerFlow's channels settings screen (core/channels/api.ts): providers, connections,
connect and disconnect, each in the shape the screen reads."""

from __future__ import annotations

from deerflow.conftest import StartApp
from deerflow.shapes import (
    CHANNEL_CONNECT_RESPONSE,
    CHANNEL_CONNECTIONS_RESPONSE,
    CHANNEL_PROVIDERS_RESPONSE,
    assert_shape,
)
from pronghorn.channels.dispatcher import code_hash
from pronghorn.persistence.repos import channels as repo

TELEGRAM_OFF = {"telegram": {"enabled": False, "bot_token": "123:abc"}}


async def test_connections_is_an_object_with_deerflow_fields(make_app: StartApp) -> None:
    app = await make_app(channels=TELEGRAM_OFF)
    db = app.runtime.db
    await db.write(
        lambda conn: repo.add_code(
            conn,
            code_hash=code_hash("c1"),
            channel="telegram",
            owner_id="alice",
            principal={"identity": "alice"},
            ttl_s=600,
        )
    )
    bound = await db.write(
        lambda conn: repo.redeem_code(
            conn,
            code_hash=code_hash("c1"),
            channel="telegram",
            external_id="42",
            external_name="alice_tg",
        )
    )
    assert bound is not None
    async with app.http("alice") as http:
        r = await http.get("/api/channels/connections")
        assert r.status_code == 200, r.text
        body = r.json()
        assert_shape(body, CHANNEL_CONNECTIONS_RESPONSE)
        (c,) = body["connections"]
        assert c["provider"] == "telegram" == c["channel"] and c["status"] == "connected"
        assert c["external_account_id"] == "42" and c["external_account_name"] == "alice_tg"
        assert c["external_id"] == "42" and c["owner_id"] == "alice"  # ours stay

        providers = (await http.get("/api/channels/providers")).json()
        assert_shape(providers, CHANNEL_PROVIDERS_RESPONSE)
        telegram = next(p for p in providers["providers"] if p["provider"] == "telegram")
        assert telegram["configured"] is True and telegram["enabled"] is False
        assert telegram["connection_status"] == "connected"
        assert "disabled" in telegram["unavailable_reason"]
        slack = next(p for p in providers["providers"] if p["provider"] == "slack")
        assert slack["configured"] is False and slack["connection_status"] == "not_connected"
        assert providers["enabled"] is False

        gone = await http.delete(f"/api/channels/connections/{c['id']}")
        assert gone.status_code == 204
        assert (await http.get("/api/channels/connections")).json() == {"connections": []}
    async with app.http("bob") as http:
        assert (await http.get("/api/channels/connections")).json() == {"connections": []}
        bob = (await http.get("/api/channels/providers")).json()["providers"]
        assert all(p["connection_status"] == "not_connected" for p in bob)


async def test_connect_answers_deerflow_connect_response(make_app: StartApp) -> None:
    section = {
        "enabled": True,
        "bot_token": "xoxb-1",
        "signing_secret": "s" * 32,
        "api_base_url": "http://127.0.0.1:9/api",  # nothing listens: no call leaves the host
    }
    app = await make_app(channels={"slack": section})
    async with app.http("alice") as http:
        providers = (await http.get("/api/channels/providers")).json()
        slack = next(p for p in providers["providers"] if p["provider"] == "slack")
        assert slack["enabled"] and slack["connectable"] and providers["enabled"] is True
        r = await http.post("/api/channels/slack/connect")
        assert r.status_code == 200, r.text
        body = r.json()
        assert_shape(body, CHANNEL_CONNECT_RESPONSE)
        assert body["provider"] == "slack" and body["mode"] == "code"
        assert body["code"] in body["instruction"] and body["expires_in"] > 0
        assert body["command"] == f"/connect {body['code']}"  # ours stays
