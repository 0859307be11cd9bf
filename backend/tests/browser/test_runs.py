"""Run control in a real browser: stop, reload mid-run, clarification, model picker."""

from __future__ import annotations

from typing import Any

import pytest

from browser.helpers import (
    LONG_WORDS,
    RESUME_WORDS,
    SECOND_MODEL_ANSWER,
    last_answer,
    pick_model,
    runs_of,
    screenshot,
    send,
    thread_id,
    wait_idle,
    wait_run_status,
)
from support.live import LiveServer

pytestmark = pytest.mark.browser


def _stopped_midway(page: Any) -> str:
    answer = page.locator("[data-testid=message-assistant]").last
    answer.get_by_test_id("stopped-note").wait_for()
    text = answer.locator(".markdown").first.inner_text().strip()
    words = text.split()
    assert 0 < len(words) < len(LONG_WORDS), text
    assert words == LONG_WORDS[: len(words)]
    return text


def test_stop_button_and_escape(page: Any, ui_server: LiveServer, request) -> None:
    pick_model(page, "slow")
    send(page, "tell me a long story")
    page.get_by_text("word003").wait_for()
    page.get_by_role("button", name="Stop (Esc)").click()
    thread = thread_id(page)
    wait_run_status(ui_server, thread, "interrupted")
    wait_idle(page, 5000)
    before = _stopped_midway(page)
    page.wait_for_timeout(700)  # no more words arrive after the stop
    assert _stopped_midway(page) == before

    # Esc stops too (focus is still in the message box). The cut-off answer above was
    # never saved, so the new run's state replaces it.
    send(page, "another long story")
    page.wait_for_function(
        """() => {
          const all = document.querySelectorAll('[data-testid=message-assistant]');
          const last = all[all.length - 1];
          return all.length === 1 && !last.querySelector('[data-testid=stopped-note]')
            && last.innerText.includes('word003');
        }"""
    )
    assert page.get_by_test_id("message-human").count() == 2
    page.keyboard.press("Escape")
    wait_idle(page, 5000)
    _stopped_midway(page)
    wait_run_status(ui_server, thread, "interrupted")
    runs = runs_of(ui_server, thread)
    assert [r["status"] for r in runs] == ["interrupted", "interrupted"]
    assert page.get_by_role("button", name="Stop (Esc)").count() == 0
    screenshot(page, request)


def test_reload_mid_run_resumes_stream(page: Any, ui_server: LiveServer, request) -> None:
    pick_model(page, "slow")
    send(page, "resume after reload please")
    page.get_by_text("tok008").wait_for()
    thread = thread_id(page)
    page.reload()
    # The page rejoins the running run and keeps streaming.
    page.get_by_role("button", name="Stop (Esc)").wait_for(timeout=5000)
    wait_idle(page)
    assert last_answer(page) == " ".join(RESUME_WORDS)
    assert page.locator("[data-testid=message-assistant]").count() == 1
    assert page.get_by_test_id("message-human").count() == 1
    assert runs_of(ui_server, thread)[0]["status"] == "success"
    screenshot(page, request)


def test_clarification_option_resumes_run(page: Any, ui_server: LiveServer, request) -> None:
    send(page, "Ask me a question")
    prompt = page.get_by_test_id("clarification")
    prompt.wait_for()
    assert "Which format would you like the answer in?" in prompt.inner_text()
    card = page.get_by_test_id("tool-card").first
    assert card.get_attribute("data-status") == "waiting"
    screenshot(page, request, "-prompt")
    prompt.get_by_role("button", name="A detailed report").click()
    page.get_by_text("you chose: A detailed report").wait_for()
    wait_idle(page)
    assert prompt.count() == 0
    assert card.get_attribute("data-status") == "done"
    # Two runs: the one that asked, and the resume that answered.
    runs = runs_of(ui_server, thread_id(page))
    assert len(runs) == 2 and runs[0]["status"] == "success"
    screenshot(page, request)


def test_model_picker_changes_the_model(page: Any, ui_server: LiveServer, request) -> None:
    picker = page.get_by_label("Model", exact=True)
    picker.locator("option[value=second]").wait_for(state="attached")
    labels = picker.locator("option").all_inner_texts()
    assert any("offline demo" in label.lower() for label in labels), labels
    pick_model(page, "second")
    send(page, "which model are you")
    page.get_by_text(SECOND_MODEL_ANSWER).wait_for()
    wait_idle(page)
    assert last_answer(page) == SECOND_MODEL_ANSWER
    run = runs_of(ui_server, thread_id(page))[0]
    assert run["kwargs"]["context"]["model_name"] == "second"
    assert picker.input_value() == "second"
    screenshot(page, request)
