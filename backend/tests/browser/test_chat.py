"""Chat basics in a real browser: streaming, tool cards, the thread list, inert markdown."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from browser.helpers import (
    ASSISTANT,
    RECORD_TEXTS,
    last_answer,
    screenshot,
    send,
    thread_id,
    wait_idle,
)

pytestmark = pytest.mark.browser

# Records every data-status each tool card (by position) goes through.
RECORD_TOOL_STATUS = """
() => {
  window.__statuses = {};
  const grab = () => document.querySelectorAll('[data-testid=tool-card]').forEach((el, i) => {
    const seen = (window.__statuses[i] ||= []);
    const s = el.getAttribute('data-status');
    if (seen[seen.length - 1] !== s) seen.push(s);
  });
  new MutationObserver(grab).observe(document.body,
    {subtree: true, childList: true, attributes: true, attributeFilter: ['data-status']});
}
"""


def test_streamed_answer(page: Any, request: pytest.FixtureRequest) -> None:
    page.evaluate(RECORD_TEXTS)
    send(page, "hello there")
    page.get_by_role("button", name="Stop (Esc)").wait_for()
    wait_idle(page)
    final = last_answer(page)
    assert final.startswith("Hello! I am Pronghorn's offline demo model")
    assert final.endswith("anything else, which I will echo back.")
    texts: list[str] = page.evaluate("window.__texts")
    partial = {t for t in texts if t != final}
    # The words arrived in several steps, each a prefix of the next (no full-text jump).
    assert len(partial) >= 2, texts
    assert all(len(a) <= len(b) for a, b in itertools.pairwise(texts)), texts
    assert page.get_by_test_id("message-human").inner_text().strip() == "hello there"
    thread_id(page)
    screenshot(page, request)


def test_tool_card_runs_and_completes(page: Any, request: pytest.FixtureRequest) -> None:
    page.evaluate(RECORD_TOOL_STATUS)
    send(page, "Write a report about otters")
    cards = page.get_by_test_id("tool-card")
    cards.first.wait_for()
    wait_idle(page)
    assert cards.count() == 3
    names = [c.locator(".tool-name").inner_text() for c in cards.all()]
    assert names == ["write_file", "bash", "present_files"]
    for card in cards.all():
        assert card.get_attribute("data-status") == "done"
    statuses: dict[str, list[str]] = page.evaluate("window.__statuses")
    assert statuses["0"] == ["running", "done"], statuses
    assert all(s[-1] == "done" and "running" in s for s in statuses.values()), statuses

    bash = cards.nth(1)
    bash.get_by_role("button").first.click()
    body = bash.locator(".tool-card-body")
    body.wait_for()
    text = body.inner_text().lower()
    assert "arguments" in text and "wc -c /mnt/user-data/outputs/otters-report.md" in text
    assert "result" in text and "[exit code: 0]" in text
    assert "Done. I wrote /mnt/user-data/outputs/otters-report.md" in last_answer(page)
    screenshot(page, request)


def test_thread_list_survives_reload(page: Any, request: pytest.FixtureRequest) -> None:
    send(page, "first chat about herons")
    wait_idle(page)
    first = thread_id(page)
    page.get_by_role("button", name="+ New chat").click()
    page.wait_for_url("**/")
    # The new chat is empty before the next message goes out (send counts the messages on
    # screen; the old thread's could still be shown for a moment on a loaded machine).
    page.wait_for_function("() => !document.querySelector('[data-testid=message-human]')")
    send(page, "second chat about voles")
    wait_idle(page)
    second = thread_id(page)
    assert second != first

    history = page.get_by_role("list", name="Chat history")
    history.get_by_text("second chat about voles").wait_for()
    page.reload()
    history.get_by_text("first chat about herons").wait_for()
    history.get_by_text("second chat about voles").wait_for()
    current = history.locator("a[aria-current=page]")
    assert current.inner_text().strip() == "second chat about voles"
    assert current.get_attribute("href") == f"/t/{second}"
    assert "voles" in last_answer(page)
    # Newest first.
    titles = [t.strip() for t in history.locator(".thread-title").all_inner_texts()]
    assert titles.index("second chat about voles") < titles.index("first chat about herons")

    # /t/<id> opens that thread; back/forward switch threads.
    history.get_by_text("first chat about herons").click()
    page.wait_for_url(f"**/t/{first}")
    page.get_by_test_id("message-human").get_by_text("first chat about herons").wait_for()
    page.go_back()
    page.wait_for_url(f"**/t/{second}")
    page.get_by_test_id("message-human").get_by_text("second chat about voles").wait_for()
    page.go_forward()
    page.wait_for_url(f"**/t/{first}")
    page.get_by_test_id("message-human").get_by_text("first chat about herons").wait_for()
    screenshot(page, request)


def test_markup_renders_inert(page: Any, request: pytest.FixtureRequest) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    text = (
        "Inert check: <img src=x onerror=alert(1)> and [click me](javascript:alert(1)) "
        "and <script>alert(2)</script> done."
    )
    send(page, text)
    wait_idle(page)
    answer = page.locator(ASSISTANT).last
    assert "You said" in answer.inner_text()
    link = answer.get_by_text("click me")
    link.wait_for()
    # The raw HTML never became elements, anywhere on the page.
    assert page.locator("img[onerror], img[src=x], script:not([type]):not([src])").count() == 0
    assert page.locator("[href^='javascript:' i], [src^='javascript:' i]").count() == 0
    # The human bubble shows the text as typed (plain text, not markup).
    assert "<img src=x onerror=alert(1)>" in page.get_by_test_id("message-human").inner_text()
    link.click()
    page.wait_for_timeout(300)
    assert dialogs == []
    assert "javascript" not in page.url
    screenshot(page, request)
