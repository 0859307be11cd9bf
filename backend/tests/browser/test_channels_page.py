"""The channels settings page in Chromium, against a live gateway and a fake Telegram Bot
API on loopback: enable Telegram with a token from the page, see it running, get a connect
code, send `/connect CODE` from the fake, see the connection listed, revoke it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from browser.helpers import SCREENSHOTS
from fakes.telegram_server import TOKEN, FakeTelegram
from support.live import LiveServer, base_config


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def channels_server(
    ui_built: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    cfg = base_config(
        models=[{"name": "s", "provider": "scripted", "rules": [{"text": "Hello from the bot."}]}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        channels={"access": {"mode": "bound"}},
    )
    srv = LiveServer(tmp_path_factory.mktemp("channels-ui"), cfg).start()
    yield srv
    srv.stop()


@pytest.fixture
def channels_page(
    context: Any, channels_server: LiveServer, request: pytest.FixtureRequest
) -> Iterator[Any]:
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if not pg.is_closed():
        pg.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    assert not errors, f"uncaught errors in the page: {errors}"


def _shot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"channels-{name}.png"), full_page=True)


def test_enable_telegram_connect_an_account_and_revoke_it(
    channels_page: Any, channels_server: LiveServer, fake: FakeTelegram
):
    page = channels_page
    page.goto(channels_server.url + "/")
    page.get_by_role("navigation", name="Extensions").get_by_role("button", name="Channels").click()
    page.wait_for_url("**/settings/channels")
    telegram = page.get_by_role("article", name="Channel Telegram")
    telegram.get_by_test_id("channel-state").filter(has_text="not set up").wait_for()
    assert page.get_by_role("article", name="Channel Slack").is_visible()
    for name in ("DingTalk", "WeCom"):  # the new platforms have their entries, not set up
        entry = page.get_by_role("article", name=f"Channel {name}", exact=True)
        entry.get_by_test_id("channel-state").filter(has_text="not set up").wait_for()
    _shot(page, "1-not-set-up")

    # set up Telegram: the token goes in a password field, then the channel runs
    telegram.get_by_role("button", name="Set up").click()
    form = page.get_by_role("form", name="Telegram settings")
    token = form.get_by_label("Bot token")
    assert token.get_attribute("type") == "password"
    token.fill(TOKEN)
    form.get_by_label("API base URL").fill(fake.url)
    form.get_by_text("More settings").click()
    form.get_by_label("Poll timeout (s)").fill("2")
    _shot(page, "2-form")
    form.get_by_role("button", name="Save").click()
    form.wait_for(state="detached")
    telegram.get_by_test_id("channel-state").filter(has_text="running").wait_for(timeout=60_000)
    stored = yaml.safe_load(channels_server.config_path.read_text())["channels"]["telegram"]
    assert stored["bot_token"] == TOKEN and stored["api_base_url"] == fake.url
    assert TOKEN not in page.content()  # never sent back to the browser

    # editing again does not reveal the token, and saving unchanged keeps it
    telegram.get_by_role("button", name="Settings").click()
    form = page.get_by_role("form", name="Telegram settings")
    assert form.get_by_label("Bot token").input_value() == ""
    assert "stored" in (form.get_by_label("Bot token").get_attribute("placeholder") or "")
    form.get_by_role("button", name="Cancel").click()

    # connect: the code, the exact message to send, the deep link from getMe
    fake.wait_for(lambda: fake.of("getMe"))
    telegram.get_by_role("button", name="Connect my account").click()
    command = telegram.get_by_test_id("connect-command").inner_text()
    assert command.startswith("/connect ")
    code = command.removeprefix("/connect ")
    link = telegram.get_by_test_id("connect-link")
    assert link.get_attribute("href") == f"https://t.me/pronghorn_bot?start={code}"
    _shot(page, "3-code")

    fake.user_message(command, user_id=777, username="carol")
    connections = page.get_by_test_id("connections")
    row = connections.get_by_role("row", name="carol (777)")
    row.wait_for(timeout=60_000)
    assert "Telegram" in row.inner_text()
    telegram.get_by_test_id("connected-note").filter(has_text="Connected as carol").wait_for()
    assert telegram.get_by_test_id("connect-code").count() == 0  # the used code is gone
    # the bound account now talks to the agent
    fake.user_message("hello", user_id=777, username="carol")
    fake.wait_for(
        lambda: any(
            c.body.get("text") == "Hello from the bot."
            for c in fake.calls
            if c.method in ("sendMessage", "editMessageText") and int(c.body["chat_id"]) == 777
        )
    )
    telegram.get_by_test_id("channel-counts").filter(has_text="1 replied").wait_for()
    _shot(page, "4-connected")

    # revoke it
    row.get_by_role("button", name="Revoke Telegram carol").click()
    row.get_by_role("button", name="Revoke", exact=True).click()
    row.wait_for(state="detached")
    page.get_by_text("None yet.").wait_for()
    with httpx.Client(base_url=channels_server.url, timeout=30) as http:
        assert http.get("/api/channels/connections").json() == {"connections": []}
