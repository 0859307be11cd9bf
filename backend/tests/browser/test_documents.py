"""Office documents in a real browser: a DOCX uploaded from the composer is converted to
Markdown at upload time, the agent is told about the copy and reads it with read_file; a
corrupt one is still attached, with a clear line saying it could not be read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser.helpers import SCREENSHOTS, api_get, send, thread_id, wait_idle
from support import documents
from support.live import LiveServer, base_config

pytestmark = pytest.mark.browser

COPY = "/mnt/user-data/uploads/plan.docx.md"
RULES = [
    {
        "match": "read my plan",
        "steps": [
            {"tool_calls": [{"name": "read_file", "args": {"description": "d", "path": COPY}}]},
            {"text": "I read the plan."},
        ],
    },
    {"text": "ok"},
]


@pytest.fixture(scope="module")
def docs_server(ui_built: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    cfg = base_config(
        models=[{"name": "s", "display_name": "Scripted", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        uploads={"convert": {"timeout_s": 300}},  # generous: a loaded test machine
    )
    srv = LiveServer(tmp_path_factory.mktemp("docs-ui"), cfg).start()
    yield srv
    srv.stop()


def test_uploaded_docx_is_read_by_the_agent(
    context: Any, docs_server: LiveServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.docx"
    plan.write_bytes(documents.docx("The herd moves north on 12 May.", heading="Migration plan"))
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not a PDF at all")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    missing: list[str] = []  # API requests answered 404
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto(docs_server.url + "/")
    page.get_by_test_id("file-input").set_input_files([str(plan), str(broken)])
    pending = page.get_by_role("list", name="Files to send")
    pending.get_by_text("plan.docx").wait_for(timeout=600_000)
    pending.get_by_text("broken.pdf").wait_for()
    assert "· text" in pending.locator("li", has_text="plan.docx").inner_text()
    page.get_by_text("broken.pdf was uploaded, but could not be read as a document").wait_for()

    send(page, "read my plan")
    wait_idle(page, timeout_ms=120_000)
    page.get_by_text("I read the plan.").wait_for()
    card = page.get_by_test_id("tool-card").first
    card.get_by_role("button").first.click()
    body = card.inner_text()
    assert "# Migration plan" in body and "The herd moves north on 12 May." in body
    # the agent's uploads context names the copy with its original
    state = api_get(docs_server, f"/threads/{thread_id(page)}/state")
    listed = {f["name"]: f for f in state["values"]["uploaded_files"]}
    assert listed["plan.docx"]["markdown_path"] == COPY
    assert "markdown_path" not in listed["broken.pdf"]
    # the finished run is asked for under the API prefix once, not twice (was a 404)
    assert not [u for u in missing if "/api/langgraph/api/langgraph/" in u or "/runs/" in u]
    run_status = re.compile(r"/api/langgraph/threads/[0-9a-f-]+/runs/[0-9a-f-]+$")
    assert [u for u in asked if run_status.search(u)], asked  # the SDK's check of the run
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    assert not errors, errors
