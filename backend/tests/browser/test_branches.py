"""Edit, regenerate and versions (branches) in a real browser, forked from the thread's
checkpoint history; the version on screen survives a reload and reopening the thread."""

from __future__ import annotations

from typing import Any

import pytest

from browser.helpers import (
    api_get,
    last_answer,
    pick_model,
    screenshot,
    send,
    thread_id,
    wait_idle,
    wait_run_status,
)
from support.live import LiveServer

pytestmark = pytest.mark.browser

HUMAN = "[data-testid=message-human]"


def _humans(page: Any) -> list[str]:
    return [t.strip() for t in page.locator(f"{HUMAN} .human-text").all_inner_texts()]


def _position(scope: Any) -> str:
    return scope.get_by_test_id("branch-switcher").locator(".branch-position").inner_text().strip()


def _edit_first(page: Any, text: str) -> None:
    first = page.locator(HUMAN).first
    first.hover()
    first.get_by_role("button", name="Edit message").click()
    box = page.get_by_label("Edited message")
    box.fill(text)
    page.get_by_role("button", name="Save and send").click()


def _wait_answer(page: Any, text: str) -> None:
    """The last answer contains ``text`` and nothing is streaming any more."""
    page.wait_for_function(
        """(text) => {
             const all = document.querySelectorAll('[data-testid=message-assistant]');
             const last = all[all.length - 1];
             return !!last && last.getAttribute('aria-busy') !== 'true'
               && last.innerText.includes(text);
           }""",
        arg=text,
        timeout=20_000,
    )
    wait_idle(page)


def _wait_humans(page: Any, want: list[str]) -> None:
    page.wait_for_function(
        """(want) => JSON.stringify([...document.querySelectorAll(
             '[data-testid=message-human] .human-text')].map(e => e.innerText.trim()))
           === JSON.stringify(want)""",
        arg=want,
    )


def test_edit_keeps_old_branch_and_switcher_survives_reload(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    send(page, "tell me about alpha otters")
    wait_idle(page)
    send(page, "and the second question")
    wait_idle(page)
    thread = thread_id(page)
    assert page.get_by_test_id("branch-switcher").count() == 0

    # Edit the first question: the conversation reruns from there (the later turn is gone
    # from this version) and the message shows "2 / 2".
    _edit_first(page, "tell me about beta voles")
    _wait_humans(page, ["tell me about beta voles"])
    _wait_answer(page, "beta voles")
    first = page.locator(HUMAN).first
    assert _position(first) == "2 / 2"
    screenshot(page, request, "-edited")

    # The old version is still there, with its whole conversation.
    first.get_by_role("button", name="Previous version of this message").click()
    _wait_humans(page, ["tell me about alpha otters", "and the second question"])
    assert _position(page.locator(HUMAN).first) == "1 / 2"
    assert "second question" in last_answer(page)

    # The server kept both: the history holds checkpoints of both branches.
    history = api_get(ui_server, f"/threads/{thread}/history?limit=200")
    texts = {
        m["content"] if isinstance(m["content"], str) else str(m["content"])
        for state in history
        for m in state["values"].get("messages", [])
        if m["type"] == "human"
    }
    assert {"tell me about alpha otters", "tell me about beta voles"} <= texts

    # A reload shows the version last viewed (1 / 2), not the newest.
    page.reload()
    _wait_humans(page, ["tell me about alpha otters", "and the second question"])
    assert _position(page.locator(HUMAN).first) == "1 / 2"

    # So does reopening the thread from the list after visiting another chat.
    page.get_by_role("button", name="+ New chat").click()
    page.wait_for_url("**/")
    page.wait_for_function("() => !document.querySelector('[data-testid=message-human]')")
    page.get_by_role("list", name="Chat history").locator(f"a[href='/t/{thread}']").click()
    page.wait_for_url(f"**/t/{thread}")
    _wait_humans(page, ["tell me about alpha otters", "and the second question"])
    page.locator(HUMAN).first.get_by_role("button", name="Next version of this message").click()
    _wait_humans(page, ["tell me about beta voles"])
    screenshot(page, request)


def test_regenerate_adds_a_version_of_the_answer(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    send(page, "regenerate me please")
    wait_idle(page)
    thread = thread_id(page)
    before = last_answer(page)
    page.get_by_role("button", name="Regenerate answer").click()
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=branch-switcher]').length > 0"
    )
    wait_idle(page)
    answers = page.locator(".answer-actions")
    assert _position(answers.last) == "2 / 2"
    assert _humans(page) == ["regenerate me please"]  # the question is not repeated
    assert last_answer(page) == before  # the demo model is deterministic
    runs = api_get(ui_server, f"/threads/{thread}/runs")
    assert [r["status"] for r in runs] == ["success", "success"]
    answers.last.get_by_role("button", name="Previous version of this answer").click()
    page.wait_for_function(
        """() => [...document.querySelectorAll('.answer-actions .branch-position')]
             .some(e => e.innerText.trim() === '1 / 2')"""
    )
    screenshot(page, request)


def test_switch_branch_while_a_run_streams_stops_it(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    send(page, "first turn about gamma")
    wait_idle(page)
    _edit_first(page, "first turn about delta")
    _wait_humans(page, ["first turn about delta"])
    _wait_answer(page, "delta")
    thread = thread_id(page)

    pick_model(page, "slow")
    send(page, "a long answer please")
    page.get_by_role("button", name="Stop (Esc)").wait_for()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=message-assistant][aria-busy=true]')"
        "?.innerText.includes('word001')"
    )
    # Switching to the other version stops the streaming run (docs/ui.md) and shows it.
    page.locator(HUMAN).first.get_by_role("button", name="Previous version of this message").click()
    _wait_humans(page, ["first turn about gamma"])
    wait_idle(page)
    wait_run_status(ui_server, thread, "interrupted")
    assert "gamma" in last_answer(page)
    screenshot(page, request)
