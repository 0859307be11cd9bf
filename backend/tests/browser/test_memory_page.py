"""The memory page in a real browser: summaries and facts from the API, add, edit, delete,
export (a download), import (a file), clear — each checked against the API afterwards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from browser.helpers import screenshot
from support.live import LiveServer

pytestmark = pytest.mark.browser

FACT = "[data-testid=memory-fact]"


def _memory(server: LiveServer) -> dict[str, Any]:
    r = httpx.get(f"{server.url}/api/memory", timeout=10)
    r.raise_for_status()
    return r.json()


def _contents(server: LiveServer) -> list[str]:
    return [f["content"] for f in _memory(server)["facts"]]


def test_memory_page_edit_add_delete_export_import_clear(
    page: Any, ui_server: LiveServer, request: Any, tmp_path: Path
) -> None:
    base = ui_server.url
    with httpx.Client(base_url=base, timeout=10) as http:
        assert http.delete("/api/memory").status_code == 200
        seed = {  # DeerFlow's UserMemory shape, as GET /api/memory answers
            "user": {"topOfMind": {"summary": "Planning a trip to Japan.", "updatedAt": ""}},
            "facts": [{"content": "Speaks Portuguese", "category": "identity"}],
        }
        assert http.post("/api/memory/import", json=seed).status_code == 200

    # reached from the sidebar
    page.get_by_role("button", name="Memory").click()
    page.wait_for_url(f"{base}/settings/memory")
    page.get_by_role("heading", name="Memory").wait_for()
    assert "Planning a trip to Japan." in page.get_by_test_id("summary-topOfMind").inner_text()
    page.locator(FACT).filter(has_text="Speaks Portuguese").wait_for()

    # add
    page.get_by_label("Fact", exact=True).fill("Prefers metric units")
    page.get_by_label("Category", exact=True).select_option("preference")
    page.get_by_role("button", name="Add fact").click()
    page.locator(FACT).filter(has_text="Prefers metric units").wait_for()
    assert _contents(ui_server) == ["Speaks Portuguese", "Prefers metric units"]

    # edit
    page.get_by_role("button", name="Edit Speaks Portuguese").click()
    row = page.locator(FACT).first
    row.get_by_label("Fact").fill("Speaks Portuguese and Spanish")
    row.get_by_label("Edit category").select_option("knowledge")
    row.get_by_role("button", name="Save").click()
    page.locator(FACT).filter(has_text="Speaks Portuguese and Spanish").wait_for()
    facts = _memory(ui_server)["facts"]
    edited = (facts[0]["content"], facts[0]["category"])
    assert edited == ("Speaks Portuguese and Spanish", "knowledge")

    # delete (with a confirmation)
    page.get_by_role("button", name="Delete Prefers metric units").click()
    page.get_by_role("button", name="Delete", exact=True).click()
    page.locator(FACT).filter(has_text="Prefers metric units").wait_for(state="detached")
    assert _contents(ui_server) == ["Speaks Portuguese and Spanish"]

    # export: a JSON download of the whole memory
    with page.expect_download() as info:
        page.get_by_role("button", name="Export").click()
    saved = tmp_path / "memory.json"
    info.value.save_as(saved)
    exported = json.loads(saved.read_text())
    assert [f["content"] for f in exported["facts"]] == ["Speaks Portuguese and Spanish"]

    # clear (with a confirmation)
    page.get_by_role("button", name="Clear memory…").click()
    page.get_by_role("button", name="Clear everything").click()
    page.get_by_text("No facts remembered yet.").wait_for()
    assert _contents(ui_server) == []

    # a file that is not an export is refused with a message; the export comes back
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2, 3]")
    page.get_by_test_id("memory-import-input").set_input_files(str(bad))
    page.get_by_text("not a memory export").wait_for()
    page.get_by_test_id("memory-import-input").set_input_files(str(saved))
    page.get_by_text("Imported memory.json.").wait_for()
    page.locator(FACT).filter(has_text="Speaks Portuguese and Spanish").wait_for()
    assert _contents(ui_server) == ["Speaks Portuguese and Spanish"]
    focus = _memory(ui_server)["user"]["topOfMind"]["summary"]
    assert focus == "Planning a trip to Japan."
    screenshot(page, request)
