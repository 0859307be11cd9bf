"""Layout in a real browser: phone width in light and dark, and the unreachable banner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from browser.helpers import SCREENSHOTS, send, wait_idle
from support.live import LiveServer

pytestmark = pytest.mark.browser

NO_SIDEWAYS_SCROLL = "() => document.documentElement.scrollWidth <= window.innerWidth"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_phone_layout(browser: Any, ui_server: LiveServer, scheme: str) -> None:
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, color_scheme=scheme, is_mobile=True
    )
    ctx.set_default_timeout(15_000)
    try:
        page = ctx.new_page()
        page.goto(ui_server.url + "/")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"phone-{scheme}-empty.png"))
        send(page, "Write a report about pronghorn speed")
        wait_idle(page)
        panel = page.get_by_role("complementary", name="Artifacts")
        panel.get_by_test_id("artifact-preview").wait_for()
        # On a phone the panel covers the chat.
        box = panel.bounding_box()
        assert box is not None and box["width"] >= 380
        assert page.evaluate(NO_SIDEWAYS_SCROLL)
        page.screenshot(path=str(SCREENSHOTS / f"phone-{scheme}-artifact.png"))
        panel.get_by_role("button", name="Close artifacts").click()
        page.get_by_test_id("tool-card").first.get_by_role("button").first.click()
        assert page.evaluate(NO_SIDEWAYS_SCROLL)
        page.screenshot(path=str(SCREENSHOTS / f"phone-{scheme}-chat.png"))
        # The chat list is a drawer behind the menu button.
        page.get_by_role("button", name="Open chat list").click()
        page.get_by_role("navigation", name="Chats").get_by_role("link").first.wait_for()
        page.wait_for_timeout(400)  # let the slide-in transition finish
        page.screenshot(path=str(SCREENSHOTS / f"phone-{scheme}-drawer.png"))
    finally:
        ctx.close()


def test_unreachable_banner(browser: Any, start_server: Callable[..., LiveServer]) -> None:
    srv = start_server()
    ctx = browser.new_context(viewport={"width": 1024, "height": 700})
    try:
        page = ctx.new_page()
        page.goto(srv.url + "/")
        page.get_by_label("Message", exact=True).wait_for()
        banner = page.get_by_role("alert").filter(has_text="Cannot reach the Pronghorn gateway")
        assert banner.count() == 0
        srv.stop()
        # The UI checks /health every 15 s and again on the browser's "online" event;
        # fire it so the test does not wait for the timer.
        page.evaluate("() => window.dispatchEvent(new Event('online'))")
        banner.wait_for(timeout=10_000)
        page.screenshot(path=str(SCREENSHOTS / "test_unreachable_banner.png"))
    finally:
        ctx.close()
