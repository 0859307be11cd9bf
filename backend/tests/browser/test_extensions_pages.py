"""The extension pages in a real browser: skills (list, view SKILL.md, enable/disable,
install a .skill file, delete it), tools, and agents (create, edit, pick one in the chat)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from browser.helpers import SECOND_MODEL_ANSWER, last_answer, screenshot, send, wait_idle
from support.live import LiveServer

pytestmark = pytest.mark.browser


def _skill_file(folder: Path, name: str) -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(
            f"{name}/SKILL.md",
            f"---\nname: {name}\ndescription: Turns meeting notes into action items.\n---\n"
            "# Meeting notes\n\nList every action item with its owner.\n",
        )
    path = folder / f"{name}.skill"
    path.write_bytes(buf.getvalue())
    return path


def rest_get(server: LiveServer, path: str) -> Any:
    r = httpx.get(f"{server.url}{path}", timeout=10)
    r.raise_for_status()
    return r.json()


def _open(page: Any, link: str) -> None:
    page.get_by_role("navigation", name="Extensions").get_by_role("button", name=link).click()
    page.get_by_role("heading", name=link, level=1).wait_for()


def test_skills_page(
    page: Any, ui_server: LiveServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _open(page, "Skills")
    assert page.url.endswith("/settings/skills")
    rows = page.get_by_test_id("skill-row")
    rows.first.wait_for()
    names = [r.locator("strong").inner_text() for r in rows.all()]
    assert {"data-analysis", "research-report", "chart-visualization", "skill-creator"} <= set(
        names
    )

    # View a SKILL.md
    row = rows.filter(has_text="data-analysis")
    row.get_by_role("button", name="View SKILL.md").click()
    content = page.get_by_test_id("skill-content")
    content.wait_for()
    assert content.inner_text().startswith("---\nname: data-analysis")
    assert (
        "/mnt/skills/public/data-analysis/SKILL.md"
        in page.get_by_role("region", name="SKILL.md of data-analysis").inner_text()
    )

    # Disable, and the server agrees; enable again
    box = page.get_by_label("Enable research-report")
    box.click()  # the switch follows the server's answer
    page.get_by_test_id("skill-row").filter(has_text="research-report").get_by_text(
        "Disabled"
    ).wait_for()
    skills = {s["name"]: s for s in rest_get(ui_server, "/api/skills")["skills"]}
    assert skills["research-report"]["enabled"] is False
    box.click()
    page.get_by_test_id("skill-row").filter(has_text="research-report").get_by_text(
        "Enabled"
    ).wait_for()

    # Install a .skill archive, then delete it
    page.get_by_label("Skill archive").set_input_files(str(_skill_file(tmp_path, "meeting-notes")))
    page.get_by_role("status").filter(has_text="Installed “meeting-notes”").wait_for()
    mine = page.get_by_test_id("skill-row").filter(has_text="meeting-notes")
    mine.get_by_text("custom").wait_for()
    screenshot(page, request)
    mine.get_by_role("button", name="Delete meeting-notes").click()
    mine.wait_for(state="detached")
    assert "meeting-notes" not in {s["name"] for s in rest_get(ui_server, "/api/skills")["skills"]}

    # A refused archive shows the server's reason
    bad = tmp_path / "bad.skill"
    bad.write_bytes(b"not a zip at all")
    page.get_by_label("Skill archive").set_input_files(str(bad))
    page.get_by_text("not a zip archive").wait_for()


def test_tools_page(page: Any, request: pytest.FixtureRequest) -> None:
    _open(page, "Tools")
    page.get_by_role("region", name="shell tools").wait_for()
    bash = page.get_by_test_id("tool-row").filter(has_text="bash")
    assert "on" in bash.inner_text()
    for group in ("file", "web", "interaction"):
        assert page.get_by_role("region", name=f"{group} tools").is_visible()
    screenshot(page, request)


def test_agents_page_and_picker(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    _open(page, "Agents")
    form = page.get_by_role("region", name="Create an agent")
    form.get_by_label("Name").fill("Not Valid")
    assert form.get_by_role("button", name="Create agent").is_disabled()
    form.get_by_label("Name").fill("second-opinion")
    form.get_by_label("Description").fill("Answers with the second model")
    form.get_by_label("Agent model").select_option("second")
    form.get_by_label("Persona / system prompt").fill("You give a second opinion.")
    form.get_by_label("All tools").uncheck()
    form.get_by_label("file", exact=True).check()
    form.get_by_role("button", name="Create agent").click()
    row = page.get_by_test_id("agent-row").filter(has_text="second-opinion")
    row.wait_for()
    assert "Tools: file" in row.inner_text() and "v1" in row.inner_text()
    agent = rest_get(ui_server, "/api/agents/second-opinion")
    assert agent["model"] == "second" and agent["system_prompt"] == "You give a second opinion."

    # Edit: a new version
    row.get_by_role("button", name="Edit second-opinion").click()
    edit = page.get_by_role("region", name="Edit “second-opinion”")
    edit.get_by_label("Description").fill("A second opinion, edited")
    edit.get_by_role("button", name="Save changes").click()
    page.get_by_test_id("agent-row").filter(has_text="A second opinion, edited").filter(
        has_text="v2"
    ).wait_for()

    # Chat with it: the picker selects it and the run goes to its assistant (and model)
    page.get_by_test_id("agent-row").filter(has_text="second-opinion").get_by_role(
        "button", name="Chat"
    ).click()
    picker = page.get_by_label("Agent", exact=True)
    picker.wait_for()
    assert picker.input_value() == "second-opinion"
    assert page.get_by_label("Model", exact=True).is_disabled()
    send(page, "what do you think?")
    wait_idle(page)
    assert last_answer(page) == SECOND_MODEL_ANSWER
    screenshot(page, request)

    # Back to the default agent, then delete the custom one
    picker.select_option("")
    assert not page.get_by_label("Model", exact=True).is_disabled()
    _open(page, "Agents")
    page.get_by_role("button", name="Delete second-opinion").click()
    page.get_by_text("No custom agents yet.").wait_for()
