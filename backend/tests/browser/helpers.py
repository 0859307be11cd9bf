"""Small helpers shared by the browser tests (page actions and API look-ups)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx

from support.live import BACKEND_DIR, LiveServer

SCREENSHOTS = BACKEND_DIR / "test-results" / "browser"
# Answers of the scripted models (tests compare the rendered text with these exactly).
LONG_WORDS = [f"word{i:03d}" for i in range(1, 121)]
RESUME_WORDS = [f"tok{i:03d}" for i in range(1, 51)]
SECOND_MODEL_ANSWER = "Second model here: the picker works."
SUGGESTIONS = ["What do otters eat?", "Where do otters live?", "How long do otters sleep?"]

ASSISTANT = "[data-testid=message-assistant]"
THREAD_URL = re.compile(r"/t/([0-9a-fA-F-]{36})")

# Records every distinct text of the last assistant message as the DOM changes.
RECORD_TEXTS = """
() => {
  window.__texts = [];
  const seen = new Set();
  const grab = () => {
    const all = document.querySelectorAll('[data-testid=message-assistant]');
    const last = all[all.length - 1];
    const t = last ? last.innerText.trim() : '';
    if (t && !seen.has(t)) { seen.add(t); window.__texts.push(t); }
  };
  new MutationObserver(grab).observe(document.body,
    {subtree: true, childList: true, characterData: true});
}
"""


def pick_model(page: Any, name: str) -> None:
    picker = page.get_by_label("Model", exact=True)
    picker.locator(f"option[value={name}]").wait_for(state="attached")
    picker.select_option(name)


# The message was taken: one more human message, and the run is either still going
# (Stop shown) or already answered (an assistant block after the last human message).
RUN_STARTED = """
(before) => {
  const humans = document.querySelectorAll('[data-testid=message-human]');
  if (humans.length <= before) return false;
  if (document.querySelector('button[aria-label="Stop (Esc)"]')) return true;
  const last = humans[humans.length - 1].nextElementSibling;
  return !!(last && last.matches('[data-testid=message-assistant]'));
}
"""


def send(page: Any, text: str) -> None:
    """Type ``text`` and press Enter; returns once the run has started (or finished)."""
    before = page.get_by_test_id("message-human").count()
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    box.press("Enter")
    page.wait_for_function(RUN_STARTED, arg=before)


def thread_id(page: Any, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if m := THREAD_URL.search(page.url):
            return m.group(1)
        page.wait_for_timeout(50)
    raise AssertionError(f"no thread id in the URL: {page.url}")


def wait_idle(page: Any, timeout_ms: int = 20_000) -> None:
    """The run is over: the Send button is back and nothing is busy."""
    page.get_by_role("button", name="Send message").wait_for(timeout=timeout_ms)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=message-assistant][aria-busy=true]')",
        timeout=timeout_ms,
    )


def last_answer(page: Any) -> str:
    return page.locator(ASSISTANT).last.inner_text().strip()


def api_get(server: LiveServer, path: str) -> Any:
    r = httpx.get(f"{server.api}{path}", timeout=10)
    r.raise_for_status()
    return r.json()


def runs_of(server: LiveServer, thread: str) -> list[dict[str, Any]]:
    return api_get(server, f"/threads/{thread}/runs")


def wait_run_status(server: LiveServer, thread: str, want: str, timeout: float = 15.0) -> dict:
    deadline = time.monotonic() + timeout
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        runs = runs_of(server, thread)
        if runs and runs[0]["status"] == want:
            return runs[0]
        time.sleep(0.1)
    raise AssertionError(f"latest run never became {want!r}: {[r['status'] for r in runs]}")


def screenshot(page: Any, request: Any, suffix: str = "") -> Path:
    """Save a screenshot now (the page fixture then skips its own)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{request.node.name}{suffix}.png"
    page.screenshot(path=str(path))
    if not suffix:
        page._shot_taken = True
    return path
