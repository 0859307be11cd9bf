"""The chat with the keyboard only, and every page at 390 px wide.

Keyboard: the first Tab lands on the skip link, which jumps to the message box; Enter sends;
Tab walks sidebar → chat → composer in reading order with a visible focus ring on every stop;
Escape closes the phone drawer. (The account menu's Escape is in test_accessibility, on a
gateway with accounts.) Phone width: no page scrolls sideways.
"""

from __future__ import annotations

from typing import Any

import pytest

from browser.helpers import RUN_STARTED, SCREENSHOTS, last_answer, thread_id, wait_idle
from support.live import LiveServer

pytestmark = pytest.mark.browser

NO_SIDEWAYS_SCROLL = "() => document.documentElement.scrollWidth <= window.innerWidth"
# The last assistant block has text (the demo model always answers).
ANSWERED = (
    "() => [...document.querySelectorAll('[data-testid=message-assistant]')].pop()"
    "?.innerText.trim().length > 0"
)
PAGE_LOADED = "() => !/Loading…/.test(document.querySelector('main')?.innerText ?? '')"

# What has focus, and whether the focus can be seen: an outline, a ring (box-shadow) or, for
# the composer's borderless textarea, the accent border its box takes (:focus-within).
FOCUSED = """
() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const css = getComputedStyle(el);
  const outline = css.outlineStyle !== 'none' && parseFloat(css.outlineWidth) > 0;
  const ring = css.boxShadow && css.boxShadow !== 'none';
  const box = el.closest('.composer');
  const within = !!box && box.matches(':focus-within')
    && getComputedStyle(box).borderTopColor !== getComputedStyle(document.body).color;
  const r = el.getBoundingClientRect();
  return {
    tag: el.tagName.toLowerCase(),
    id: el.id,
    name: (el.getAttribute('aria-label') || el.labels?.[0]?.innerText || el.innerText
      || el.getAttribute('placeholder') || el.getAttribute('title') || '').trim().slice(0, 60),
    visible: outline || ring || within,
    onScreen: r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0
      && r.top < window.innerHeight && r.left < window.innerWidth,
    inSidebar: !!el.closest('nav.sidebar'),
    inComposer: !!el.closest('.composer'),
  };
}
"""


def tab_stops(page: Any, limit: int = 60) -> list[dict[str, Any]]:
    """Load the page afresh and Tab from its top until focus leaves it (or `limit` stops)."""
    page.reload()
    page.get_by_label("Message", exact=True).wait_for()
    page.locator(".markdown-pending").first.wait_for(state="detached")
    stops: list[dict[str, Any]] = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        now = page.evaluate(FOCUSED)
        if now is None or (stops and now == stops[0]):
            break
        stops.append(now)
    return stops


@pytest.mark.timeout(300)
def test_chat_by_keyboard(page: Any, ui_server: LiveServer, request: pytest.FixtureRequest) -> None:
    page.get_by_label("Message", exact=True).wait_for()
    # First Tab: the skip link, shown on focus; Enter on it puts the caret in the message box.
    page.keyboard.press("Tab")
    first = page.evaluate(FOCUSED)
    assert first["name"] == "Skip to message box" and first["visible"] and first["onScreen"], first
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement?.id === 'composer-input'")

    # Typing then Enter sends (Shift+Enter is a new line, not a send).
    page.keyboard.type("first line")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("keyboard only please")
    assert page.get_by_test_id("message-human").count() == 0
    page.keyboard.press("Enter")
    page.wait_for_function(RUN_STARTED, arg=0)
    wait_idle(page)
    page.wait_for_function(ANSWERED)
    thread_id(page)
    assert "keyboard only please" in page.get_by_test_id("message-human").last.inner_text()
    assert last_answer(page)

    stops = tab_stops(page)
    names = [s["name"] for s in stops]
    hidden = [s for s in stops if not s["visible"]]
    assert not hidden, f"focus is not visible on: {hidden}"
    offscreen = [s for s in stops[1:] if not s["onScreen"]]
    assert not offscreen, f"focus went off screen: {offscreen}"
    # Reading order: skip link, the sidebar (new chat, search, the chat just made), then the
    # chat, with the message box and its controls last.
    assert stops[0]["name"] == "Skip to message box", names
    sidebar = [i for i, s in enumerate(stops) if s["inSidebar"]]
    composer = [i for i, s in enumerate(stops) if s["inComposer"]]
    assert sidebar and composer, names
    assert max(sidebar) < min(composer), names
    assert any("New chat" in s["name"] for s in stops[: min(composer)]), names
    assert any(s["id"] == "composer-input" for s in stops), names
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#composer-input").focus()
    page.screenshot(path=str(SCREENSHOTS / "keyboard-composer-focus.png"))

    # A second message by keyboard from the focused box, into the same thread.
    page.keyboard.type("and another")
    page.keyboard.press("Enter")
    page.wait_for_function(RUN_STARTED, arg=1)
    wait_idle(page)
    assert page.get_by_test_id("message-human").count() == 2


PHONE_PAGES = [
    "/",
    "/settings/agents",
    "/settings/mcp",
    "/settings/skills",
    "/settings/tools",
    "/settings/memory",
    "/settings/channels",
    "/settings/keys",
]


@pytest.mark.timeout(300)
def test_phone_width_pages_and_drawer(browser: Any, ui_server: LiveServer) -> None:
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    ctx.set_default_timeout(20_000)
    try:
        page = ctx.new_page()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for path in PHONE_PAGES:
            page.goto(ui_server.url + path)
            heading = page.get_by_role("heading", level=1)
            heading.or_(page.get_by_label("Message", exact=True)).first.wait_for()
            page.wait_for_function(PAGE_LOADED)
            name = "chat" if path == "/" else path.rsplit("/", 1)[-1]
            page.screenshot(path=str(SCREENSHOTS / f"phone-390-{name}.png"))
            assert page.evaluate(NO_SIDEWAYS_SCROLL), f"{path} scrolls sideways at 390 px"

        # The chat list is a drawer behind the menu button; Escape closes it.
        page.goto(ui_server.url + "/")
        drawer_open = "() => document.querySelector('.app')?.classList.contains('sidebar-open')"
        page.get_by_role("button", name="Open chat list").click()
        page.wait_for_function(drawer_open)
        page.get_by_role("button", name="New chat").focus()
        page.keyboard.press("Escape")
        page.wait_for_function(f"() => !({drawer_open})()")
        assert page.evaluate(NO_SIDEWAYS_SCROLL)
    finally:
        ctx.close()
