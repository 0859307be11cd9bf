"""Follow-up suggestion chips and the `/` skills menu in a real browser."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from browser.helpers import SUGGESTIONS, screenshot, send, thread_id, wait_idle
from support.live import LiveServer

pytestmark = pytest.mark.browser


def _enabled_skills(server: LiveServer) -> list[dict[str, Any]]:
    r = httpx.get(f"{server.url}/api/skills", timeout=10)
    r.raise_for_status()
    return [s for s in r.json()["skills"] if s["enabled"]]


def test_suggestion_chip_sends_it(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    send(page, "tell me about river otters")
    wait_idle(page)
    chips = page.get_by_role("group", name="Suggested follow-ups").get_by_role("button")
    chips.first.wait_for()
    assert chips.all_inner_texts() == SUGGESTIONS
    screenshot(page, request, "-chips")

    chips.nth(1).click()
    page.wait_for_function(
        "(want) => [...document.querySelectorAll('[data-testid=message-human]')]"
        ".map(e => e.innerText.trim()).at(-1) === want",
        arg=SUGGESTIONS[1],
    )
    # The chips go away while the answer streams, then the next ones show up.
    wait_idle(page)
    page.get_by_role("group", name="Suggested follow-ups").wait_for()
    runs = httpx.get(f"{ui_server.api}/threads/{thread_id(page)}/runs", timeout=10).json()
    assert len(runs) == 2
    assert runs[0]["kwargs"]["input"]["messages"][0]["content"] == SUGGESTIONS[1]
    screenshot(page, request)


def test_slash_opens_skills_and_inserts_one(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    enabled = _enabled_skills(ui_server)
    assert len(enabled) >= 2, enabled
    box = page.get_by_label("Message", exact=True)
    box.click()
    box.press_sequentially("/")
    menu = page.get_by_role("listbox", name="Skills")
    menu.wait_for()
    options = menu.get_by_role("option")
    names = [t.split("\n")[0].strip() for t in options.all_inner_texts()]
    assert names == [f"/{s['name']}" for s in enabled][: len(names)]
    first = enabled[0]
    assert first["description"][:20] in options.first.inner_text()
    assert options.first.get_attribute("aria-selected") == "true"
    assert box.get_attribute("aria-activedescendant") == options.first.get_attribute("id")

    # Arrows move the choice; Enter inserts it (and sends nothing).
    box.press("ArrowDown")
    assert options.nth(1).get_attribute("aria-selected") == "true"
    box.press("ArrowUp")
    box.press("ArrowUp")  # wraps to the last one
    assert options.last.get_attribute("aria-selected") == "true"
    box.press("ArrowDown")
    screenshot(page, request, "-menu")
    box.press("Enter")
    assert box.input_value() == f"/{first['name']} "
    assert menu.count() == 0
    assert page.get_by_test_id("message-human").count() == 0

    # Typing narrows the list; Tab inserts too; Escape closes without stopping anything.
    box.fill("")
    second = enabled[1]
    box.press_sequentially(f"please /{second['name'][:4]}")
    menu.wait_for()
    assert f"/{second['name']}" in menu.inner_text()
    box.press("Escape")
    assert menu.count() == 0
    assert box.input_value() == f"please /{second['name'][:4]}"
    box.press_sequentially(second["name"][4:6])  # a new word reopens it
    menu.wait_for()
    target = next(
        i for i, t in enumerate(options.all_inner_texts()) if t.startswith(f"/{second['name']}")
    )
    for _ in range(target):
        box.press("ArrowDown")
    box.press("Tab")
    assert box.input_value() == f"please /{second['name']} "
    assert menu.count() == 0
    screenshot(page, request)


def test_phone_width_edit_and_skills(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    """At 390 px the edit form, the version switcher, the chips and the / list fit."""
    page.set_viewport_size({"width": 390, "height": 844})
    send(page, "a question on a phone")
    wait_idle(page)
    page.get_by_role("group", name="Suggested follow-ups").wait_for()
    fits = "() => document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(fits)
    page.get_by_role("button", name="Edit message").click()
    page.get_by_label("Edited message").wait_for()
    assert page.evaluate(fits)
    screenshot(page, request, "-edit")
    page.get_by_role("button", name="Cancel").click()
    box = page.get_by_label("Message", exact=True)
    box.click()
    box.press_sequentially("/")
    menu = page.get_by_role("listbox", name="Skills")
    menu.wait_for()
    width = page.evaluate("() => window.innerWidth")
    bounds = menu.bounding_box()
    assert bounds is not None and bounds["x"] >= 0 and bounds["x"] + bounds["width"] <= width
    assert page.evaluate(fits)
    screenshot(page, request)
