"""axe-core on every page of the UI: no serious or critical violation, light and dark.

Pages with auth off (the local user): the empty chat, a chat with an answer and its artifact
open, a missing thread, and every settings page. With `auth: {mode: local}`: the setup page,
the login page, and the account pages (API keys, users, password) of a signed-in admin.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser.axe import blocking, describe
from browser.conftest import browser_config
from browser.helpers import SCREENSHOTS, send, wait_idle
from support.live import LiveServer

pytestmark = pytest.mark.browser

SETTINGS = ["keys", "users", "password", "mcp", "skills", "tools", "agents", "memory", "channels"]
ADMIN = {"username": "ada", "display_name": "Ada Admin", "password": "correct horse battery 1"}


def scan(page: Any, name: str) -> None:
    """Screenshot the page as scanned, then fail on any serious or critical violation."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"a11y-{name}.png"))
    found = blocking(page)
    assert not found, f"axe on {name} ({page.url}):\n{describe(found)}"


def settled(page: Any) -> None:
    """The page's code has loaded and its data request has answered (no loading notes)."""
    page.wait_for_function(
        "() => !document.querySelector('[aria-busy=true]') &&"
        " !/Loading…/.test(document.querySelector('main')?.innerText ?? 'Loading…')"
    )


@pytest.fixture(params=["light", "dark"])
def scheme_context(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 820}, color_scheme=request.param)
    ctx.set_default_timeout(20_000)
    ctx.scheme = request.param
    yield ctx
    ctx.close()


@pytest.mark.timeout(300)
def test_chat_pages(scheme_context: Any, ui_server: LiveServer) -> None:
    page = scheme_context.new_page()
    scheme = scheme_context.scheme
    page.goto(ui_server.url + "/")
    page.get_by_label("Message", exact=True).wait_for()
    settled(page)
    scan(page, f"empty-{scheme}")

    send(page, "Write a report about pronghorn speed")
    wait_idle(page)
    panel = page.get_by_role("complementary", name="Artifacts")
    panel.get_by_test_id("artifact-preview").wait_for()
    page.locator(".markdown-pending").first.wait_for(state="detached")
    scan(page, f"chat-artifact-{scheme}")

    # A question for the user (clarification card), then a plan (the todo list).
    page.get_by_role("button", name="New chat").first.click()
    send(page, "Ask me a question")
    page.get_by_test_id("clarification").wait_for()
    scan(page, f"chat-clarification-{scheme}")
    page.get_by_test_id("clarification").get_by_role("button").first.click()
    page.get_by_text("you chose:").wait_for()
    wait_idle(page)
    send(page, "Make a plan for a picnic")
    wait_idle(page)
    scan(page, f"chat-plan-{scheme}")

    page.goto(ui_server.url + "/t/00000000-0000-4000-8000-000000000000")
    page.get_by_role("button", name="New chat").first.wait_for()
    scan(page, f"thread-missing-{scheme}")


@pytest.mark.timeout(300)
def test_settings_pages(scheme_context: Any, ui_server: LiveServer) -> None:
    page = scheme_context.new_page()
    scheme = scheme_context.scheme
    for name in SETTINGS:
        page.goto(f"{ui_server.url}/settings/{name}")
        page.get_by_role("heading", level=1).wait_for()
        settled(page)
        scan(page, f"settings-{name}-{scheme}")
        if name == "mcp":
            page.get_by_role("button", name="Add server").click()
            page.get_by_label("Name", exact=True).wait_for()
            scan(page, f"settings-mcp-form-{scheme}")


@pytest.fixture(scope="module")
def auth_server(ui_built: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    config = browser_config()
    config["auth"] = {"mode": "local"}
    srv = LiveServer(tmp_path_factory.mktemp("browser-a11y-auth"), config).start()
    yield srv
    srv.stop()


@pytest.mark.timeout(300)
def test_auth_pages(browser: Any, auth_server: LiveServer) -> None:
    srv = auth_server
    token = (srv.workdir / "data" / "setup-token").read_text(encoding="utf-8").strip()
    ctx = browser.new_context(viewport={"width": 1280, "height": 820})
    ctx.set_default_timeout(20_000)
    try:
        page = ctx.new_page()
        page.goto(f"{srv.url}/setup?token={token}")
        page.get_by_role("form", name="Create the admin account").wait_for()
        scan(page, "setup")

        page.goto(f"{srv.url}/login")
        page.get_by_role("form").wait_for()
        scan(page, "login-before-setup")

        r = ctx.request.post(f"{srv.url}/api/auth/setup", data={**ADMIN, "token": token})
        assert r.status == 201, r.text()
        for name in ("keys", "users", "password"):
            page.goto(f"{srv.url}/settings/{name}")
            page.get_by_role("heading", level=1).wait_for()
            settled(page)
            scan(page, f"settings-{name}-signed-in")

        # The account menu by keyboard: Enter opens it, Tab reaches its items, Escape closes
        # it and gives the focus back to its button.
        button = page.get_by_role("button", name=f"Account: {ADMIN['display_name']}")
        button.focus()
        page.keyboard.press("Enter")
        menu = page.get_by_role("menu", name="Account")
        menu.wait_for()
        scan(page, "account-menu")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement?.getAttribute('role')") == "menuitem"
        page.keyboard.press("Escape")
        menu.wait_for(state="detached")
        page.wait_for_function("() => document.activeElement?.classList.contains('user-button')")

        fresh = browser.new_context(viewport={"width": 1280, "height": 820})
        try:
            login = fresh.new_page()
            login.goto(f"{srv.url}/login")
            login.get_by_role("form", name="Sign in").wait_for()
            scan(login, "login")
        finally:
            fresh.close()
    finally:
        ctx.close()
