"""Tool approvals, run feedback and the budget badge in a real browser: the approval card
shows the tool and its arguments; Approve runs the call, Deny answers the model with a
refusal; thumbs under an answer are stored on its run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from browser.helpers import SCREENSHOTS, runs_of, send, thread_id, wait_idle
from support.live import LiveServer, base_config

pytestmark = pytest.mark.browser

RULES = [
    {
        "match": ["clean up"],
        "steps": [
            {
                "tool_calls": [
                    {
                        "name": "bash",
                        "args": {"command": "echo cleaned-by-bash", "description": "tidy"},
                    }
                ]
            },
            {"text": "All tidy now."},
        ],
    },
    {
        "text": "Just chatting.",
        "usage": {"input_tokens": 40, "output_tokens": 10, "total_tokens": 50},
    },
]


@pytest.fixture(scope="module")
def approvals_server(
    ui_built: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    cfg = base_config(
        models=[{"name": "tidy", "display_name": "Tidy", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "tidy"},
        sandbox={"isolation": "none"},
        approvals={"tools": ["@shell"]},
        budgets={"per_user_daily": {"tokens": 1_000_000}},
    )
    srv = LiveServer(tmp_path_factory.mktemp("browser-approvals"), cfg).start()
    yield srv
    srv.stop()


@pytest.fixture
def approvals_page(
    context: Any, approvals_server: LiveServer, request: pytest.FixtureRequest
) -> Iterator[Any]:
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.goto(approvals_server.url + "/")
    yield pg
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if not pg.is_closed():
        pg.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"))
    assert not errors, f"uncaught errors in the page: {errors}"


def _tool_messages(server: LiveServer, thread: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{server.api}/threads/{thread}/state", timeout=10)
    r.raise_for_status()
    return [m for m in r.json()["values"]["messages"] if m["type"] == "tool"]


def _card(page: Any) -> Any:
    card = page.get_by_test_id("approval-card")
    card.wait_for()
    assert card.get_by_test_id("approval-tool").inner_text() == "bash"
    assert "echo cleaned-by-bash" in card.get_by_test_id("approval-args").inner_text()
    return card


def test_approve_runs_the_command(approvals_page: Any, approvals_server: LiveServer) -> None:
    page = approvals_page
    send(page, "please clean up")
    card = _card(page)
    thread = thread_id(page)
    assert _tool_messages(approvals_server, thread) == []  # nothing ran yet
    card.get_by_role("button", name="Approve").click()
    page.get_by_text("All tidy now.").wait_for()
    wait_idle(page)
    assert page.get_by_test_id("approval-card").count() == 0
    (result,) = _tool_messages(approvals_server, thread)
    assert "cleaned-by-bash" in str(result["content"]) and result.get("status") != "error"


def test_deny_with_a_reason(approvals_page: Any, approvals_server: LiveServer) -> None:
    page = approvals_page
    send(page, "clean up again")
    card = _card(page)
    card.get_by_placeholder("Reason for denying (optional)").fill("not on my machine")
    card.get_by_role("button", name="Deny").click()
    page.get_by_text("All tidy now.").wait_for()
    wait_idle(page)
    thread = thread_id(page)
    (result,) = _tool_messages(approvals_server, thread)
    assert result["status"] == "error" and "not on my machine" in str(result["content"])
    assert "cleaned-by-bash" not in str(result["content"])


def test_feedback_and_budget_badge(approvals_page: Any, approvals_server: LiveServer) -> None:
    page = approvals_page
    send(page, "hello")
    # The answer, not the follow-up chip: the suggestions call gets the same scripted reply,
    # and once its chip is shown an unscoped text locator matches both.
    page.get_by_test_id("message-assistant").get_by_text("Just chatting.").wait_for()
    wait_idle(page)
    thread = thread_id(page)
    (run,) = runs_of(approvals_server, thread)
    up = page.get_by_role("button", name="Good answer")
    up.click()
    page.wait_for_function(
        "() => document.querySelector('button[aria-label=\"Good answer\"]')"
        "?.getAttribute('aria-pressed') === 'true'"
    )
    url = f"{approvals_server.url}/api/threads/{thread}/runs/{run['run_id']}/feedback"
    (saved,) = httpx.get(url, timeout=10).json()
    assert saved["rating"] == 1
    page.get_by_role("button", name="Bad answer").click()
    page.get_by_placeholder("What was wrong? (optional)").fill("too short")
    page.get_by_role("button", name="Send", exact=True).click()
    page.get_by_text("“too short”").wait_for()
    (saved,) = httpx.get(url, timeout=10).json()
    assert saved["rating"] == -1 and saved["comment"] == "too short"
    page.locator('button[title="Token usage"]').click()
    lines = page.get_by_test_id("budget-lines")
    lines.wait_for()
    assert "Today:" in lines.inner_text() and "1,000,000 tokens" in lines.inner_text()
