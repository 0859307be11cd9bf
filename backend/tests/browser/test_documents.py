"""Office documents in a real browser: a DOCX, an XLSX and a PDF uploaded from the composer
are converted to Markdown at upload time, the agent is told about the copies and reads each
with read_file; a corrupt one is still attached, with a clear line saying it could not be
read."""

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
SHEET_COPY = "/mnt/user-data/uploads/herd.xlsx.md"
PDF_COPY = "/mnt/user-data/uploads/notes.pdf.md"
RULES = [
    {
        "match": "read my plan",
        "steps": [
            {
                "tool_calls": [
                    {"name": "read_file", "args": {"description": "d", "path": path}}
                    for path in (COPY, SHEET_COPY, PDF_COPY)
                ]
            },
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
    sheet = tmp_path / "herd.xlsx"
    sheet.write_bytes(documents.xlsx([["animal", "count"], ["pronghorn", 412]]))
    notes = tmp_path / "notes.pdf"
    notes.write_bytes(documents.pdf("Water at the south spring."))
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
    files = [str(plan), str(sheet), str(notes), str(broken)]
    page.get_by_test_id("file-input").set_input_files(files)
    pending = page.get_by_role("list", name="Files to send")
    pending.get_by_text("plan.docx").wait_for(timeout=600_000)
    pending.get_by_text("broken.pdf").wait_for()
    for name in ("plan.docx", "herd.xlsx", "notes.pdf"):
        assert "· text" in pending.locator("li", has_text=name).inner_text(), name
    page.get_by_text("broken.pdf was uploaded, but could not be read as a document").wait_for()

    send(page, "read my plan")
    wait_idle(page, timeout_ms=120_000)
    page.get_by_text("I read the plan.").wait_for()
    cards = page.get_by_test_id("tool-card")
    expected = [
        ("# Migration plan", "The herd moves north on 12 May."),
        ("pronghorn", "412"),
        ("Water at the south spring.",),
    ]
    for index, needles in enumerate(expected):
        card = cards.nth(index)
        card.get_by_role("button").first.click()
        body = card.inner_text()
        assert all(n in body for n in needles), (index, body)
    # the agent's uploads context names the copy with its original
    state = api_get(docs_server, f"/threads/{thread_id(page)}/state")
    listed = {f["name"]: f for f in state["values"]["uploaded_files"]}
    assert listed["plan.docx"]["markdown_path"] == COPY
    assert listed["herd.xlsx"]["markdown_path"] == SHEET_COPY
    assert listed["notes.pdf"]["markdown_path"] == PDF_COPY
    assert "markdown_path" not in listed["broken.pdf"]
    # the finished run is asked for under the API prefix once, not twice (was a 404)
    assert not [u for u in missing if "/api/langgraph/api/langgraph/" in u or "/runs/" in u]
    run_status = re.compile(r"/api/langgraph/threads/[0-9a-f-]+/runs/[0-9a-f-]+$")
    assert [u for u in asked if run_status.search(u)], asked  # the SDK's check of the run
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    assert not errors, errors
