"""DeerFlow's integrations screen (core/integrations/lark/api.ts): the Lark status and the
page's actions answer in its shapes, from the Feishu channel's config. (The state of a
running channel is pinned in channels/test_feishu.py against the fake Feishu.)"""

from __future__ import annotations

from deerflow.conftest import StartApp
from deerflow.shapes import (
    LARK_AUTH_COMPLETE_RESPONSE,
    LARK_CONFIG_COMPLETE_RESPONSE,
    LARK_INSTALL_RESPONSE,
    LARK_STATUS,
    assert_shape,
)

LARK_OFF = {
    "feishu": {
        "enabled": False,
        "app_id": "cli_test123",
        "app_secret": "shh",
        "verification_token": "vt",
        "api_base_url": "https://open.larksuite.com",
    }
}


async def test_status_without_a_feishu_channel(make_app: StartApp) -> None:
    app = await make_app()
    async with app.http("alice") as http:
        r = await http.get("/api/integrations/lark/status")
        assert r.status_code == 200, r.text
        status = r.json()
        assert_shape(status, LARK_STATUS)
        assert status["app_configured"] is False and status["app_id"] is None
        assert status["auth"]["status"] == "not_configured"
        assert status["installed"] is False and "channels.feishu" in status["cli"]["error"]
    async with app.http(None) as http:
        assert (await http.get("/api/integrations/lark/status")).status_code == 401


async def test_status_from_config_and_the_actions(make_app: StartApp) -> None:
    app = await make_app(channels=LARK_OFF)
    async with app.http("alice") as http:
        status = (await http.get("/api/integrations/lark/status")).json()
        assert_shape(status, LARK_STATUS)
        assert status["app_configured"] is True and status["app_id"] == "cli_test123"
        assert status["app_brand"] == "lark"
        assert status["auth"]["status"] == "unavailable" and not status["auth"]["verified"]
        assert "shh" not in str(status)

        install = await http.post("/api/integrations/lark/install")
        assert install.status_code == 200
        assert_shape(install.json(), LARK_INSTALL_RESPONSE)
        assert install.json()["success"] is False
        for path, shape in (
            ("config/complete", LARK_CONFIG_COMPLETE_RESPONSE),
            ("config/credentials", LARK_CONFIG_COMPLETE_RESPONSE),
            ("auth/complete", LARK_AUTH_COMPLETE_RESPONSE),
        ):
            r = await http.post(f"/api/integrations/lark/{path}", json={})
            assert r.status_code == 200, path
            assert_shape(r.json(), shape)
            assert r.json()["success"] is False and "config.yaml" in r.json()["message"]
