"""Sub-agents in a real browser: the Ultra toggle, live parallel cards, and the cards
restored after a reload (mid-run from the replayed events, after the run from the state)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser.helpers import SCREENSHOTS, pick_model, send, thread_id, wait_idle, wait_run_status
from support.live import LiveServer, base_config

pytestmark = pytest.mark.browser

CARD = "[data-testid=subagent-card]"


def _task(description: str, prompt: str, kind: str = "general-purpose") -> dict[str, Any]:
    args = {"description": description, "prompt": prompt, "subagent_type": kind}
    return {"name": "task", "args": args}


def _sub(name: str, latency: float) -> dict[str, Any]:
    look = {"name": "ls", "args": {"description": "look", "path": "/mnt/user-data/workspace"}}
    return {
        "match": f"sub {name}",
        "steps": [
            {"text": f"Looking into {name}.", "tool_calls": [look]},
            {"text": f"{name} findings", "latency_s": latency},
        ],
    }


RULES = [
    {
        "match": "research the three topics",
        "steps": [
            {
                "tool_calls": [
                    _task("Research alpha", "sub alpha: go"),
                    _task("Research beta", "sub beta: go"),
                    _task("Count with bash", "sub gamma: go", "bash"),
                ]
            },
            {"text": "Combined report ready."},
        ],
    },
    _sub("alpha", 2.0),
    _sub("beta", 2.5),
    _sub("gamma", 3.0),
]


@pytest.fixture(scope="module")
def sub_server(ui_built: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    cfg = base_config(
        models=[
            {"name": "demo", "display_name": "Offline demo model", "provider": "demo"},
            {
                "name": "sub",
                "display_name": "Delegating model",
                "provider": "scripted",
                "rules": RULES,
            },
        ],
        agent={"default_model": "demo"},
        sandbox={"isolation": "none"},
    )
    srv = LiveServer(tmp_path_factory.mktemp("browser-subagents"), cfg).start()
    yield srv
    srv.stop()


@pytest.fixture
def ui(context: Any, sub_server: LiveServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.goto(sub_server.url + "/")
    yield pg
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if not pg.is_closed():
        pg.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"))
    assert not errors, f"uncaught errors in the page: {errors}"


def _count(page: Any, status: str) -> int:
    return page.locator(f"{CARD}[data-status={status}]").count()


def _wait_cards(page: Any, status: str, n: int = 3, timeout_ms: int = 20_000) -> None:
    page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length === n",
        arg=[f"{CARD}[data-status={status}]", n],
        timeout=timeout_ms,
    )


def _start(page: Any) -> None:
    pick_model(page, "sub")
    ultra = page.get_by_label("Ultra")
    assert not ultra.is_checked()
    ultra.check()
    send(page, "research the three topics")


def _check_finished_cards(page: Any) -> None:
    _wait_cards(page, "completed")
    cards = page.locator(CARD)
    texts = [cards.nth(i).inner_text() for i in range(3)]
    assert "Research alpha" in texts[0] and "general-purpose" in texts[0]
    assert "Count with bash" in texts[2] and "bash" in texts[2]
    for i in range(3):
        card = cards.nth(i)
        assert card.get_by_test_id("subagent-duration").inner_text().endswith("s")
        assert card.get_by_test_id("subagent-usage").inner_text().endswith("tok")
    # collapsed when finished; opening one shows its trail and its result
    beta = cards.nth(1)
    header = beta.get_by_role("button")
    assert header.get_attribute("aria-expanded") == "false"
    header.click()
    trail = beta.get_by_test_id("subagent-trail")
    assert "Looking into beta." in trail.inner_text() and "ls" in trail.inner_text()
    assert beta.get_by_test_id("subagent-result").inner_text() == "beta findings"
    header.click()
    assert header.get_attribute("aria-expanded") == "false"


def test_ultra_mode_shows_parallel_sub_agents_live_and_after_reload(
    ui: Any, sub_server: LiveServer
) -> None:
    _start(ui)
    # all three work at the same time, each card open with its live trail
    _wait_cards(ui, "running")
    first = ui.locator(CARD).first
    first.get_by_text("Looking into alpha.").wait_for()
    assert first.get_by_role("button").get_attribute("aria-expanded") == "true"
    wait_idle(ui, 30_000)
    _check_finished_cards(ui)
    assert (
        "Combined report ready." in ui.locator("[data-testid=message-assistant]").last.inner_text()
    )
    # a reload rebuilds the cards from the thread's state (the task results)
    ui.reload()
    _check_finished_cards(ui)


def test_reload_mid_run_replays_the_sub_agent_events(ui: Any, sub_server: LiveServer) -> None:
    _start(ui)
    _wait_cards(ui, "running")
    thread = thread_id(ui)
    ui.reload()
    # rejoined: the replayed events show the same three tasks working, then finishing
    _wait_cards(ui, "running")
    assert ui.locator(CARD).first.get_by_text("Research alpha").count() == 1
    wait_run_status(sub_server, thread, "success", timeout=30)
    _wait_cards(ui, "completed")
