"""Files in a real browser: artifacts preview and download, uploads the agent sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browser.helpers import api_get, last_answer, screenshot, send, thread_id, wait_idle
from support.live import LiveServer

pytestmark = pytest.mark.browser


def _thread_file(server: LiveServer, thread: str, name: str) -> Path:
    found = [p for p in server.workdir.rglob(name) if thread in str(p)]
    assert len(found) == 1, found
    return found[0]


def test_artifact_preview_and_download(
    page: Any, ui_server: LiveServer, request, tmp_path: Path
) -> None:
    send(page, "Create a report about kestrels")
    wait_idle(page)
    thread = thread_id(page)
    panel = page.get_by_role("complementary", name="Artifacts")
    preview = panel.get_by_test_id("artifact-preview")
    preview.wait_for()
    preview.get_by_role("heading", name="Report: kestrels").wait_for()
    assert "/mnt/user-data/outputs/kestrels-report.md" in preview.inner_text()
    with page.expect_download() as info:
        panel.get_by_role("link", name="Download kestrels-report.md").click()
    download = info.value
    assert download.suggested_filename == "kestrels-report.md"
    saved = tmp_path / "dl.md"
    download.save_as(saved)
    on_disk = _thread_file(ui_server, thread, "kestrels-report.md")
    assert saved.read_bytes() == on_disk.read_bytes()
    assert saved.read_bytes().startswith(b"# Report: kestrels")
    screenshot(page, request)


def test_upload_is_seen_by_agent(page: Any, ui_server: LiveServer, request, tmp_path) -> None:
    src = tmp_path / "field-notes.txt"
    src.write_text("pronghorn sightings: 12\n", encoding="utf-8")
    page.get_by_test_id("file-input").set_input_files(str(src))
    pending = page.get_by_role("list", name="Files to send")
    pending.get_by_text("field-notes.txt").wait_for()
    page.get_by_role("button", name="Send message").wait_for()
    send(page, "what did I upload")
    wait_idle(page)
    thread = thread_id(page)
    # The chip is on the sent message, and the composer has none left.
    sent = page.get_by_test_id("message-human").get_by_role("list", name="Attached files")
    sent.get_by_text("field-notes.txt").wait_for()
    assert page.get_by_role("list", name="Files to send").count() == 0
    # The model was told about the file (the demo model echoes the message it got).
    assert "/mnt/user-data/uploads/field-notes.txt" in last_answer(page)
    state = api_get(ui_server, f"/threads/{thread}/state")
    uploaded = state["values"]["uploaded_files"]
    assert [f["virtual_path"] for f in uploaded] == ["/mnt/user-data/uploads/field-notes.txt"]
    stored = _thread_file(ui_server, thread, "field-notes.txt")
    assert stored.read_bytes() == src.read_bytes()
    screenshot(page, request)
