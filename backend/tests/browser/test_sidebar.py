"""The sidebar with 5,000 threads in Chromium: a page at a time with more on scroll,
server-side search by message text and by title, pin (kept at the top after a reload),
rename and delete."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, insert, select

from browser.helpers import SCREENSHOTS
from pronghorn.persistence.repos.threads import new_thread_row
from pronghorn.persistence.tables import threads
from support.live import LiveServer, base_config

pytestmark = pytest.mark.browser

COUNT = 5000


def _bulk_insert(srv: LiveServer, count: int) -> None:
    """`count` threads of the server's one (local) user, written straight into its SQLite
    database in one transaction (through the HTTP API it would take minutes on a loaded
    machine); the newest is ``Chat {count-1}``."""
    db = srv.workdir / "data" / "pronghorn.db"
    engine = create_engine(f"sqlite:///{db}")
    try:
        with engine.begin() as conn:
            owner = conn.execute(select(threads.c.owner_id).limit(1)).scalar_one()
            rows = [
                new_thread_row(
                    str(uuid.uuid4()), metadata={"title": f"Chat {i:04d}"}, owner_id=owner
                )
                for i in range(count)
            ]
            conn.execute(insert(threads), rows)
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def crowded(ui_built: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = LiveServer(tmp_path_factory.mktemp("sidebar"), base_config()).start()
    with httpx.Client(base_url=srv.url, timeout=60) as http:
        tid = http.post("/api/langgraph/threads", json={"metadata": {"graph_id": "echo"}})
        said = tid.json()["thread_id"]
        msg = {"type": "human", "content": "our mascot is a quokka named Ada"}
        r = http.post(f"/api/langgraph/threads/{said}/state", json={"values": {"messages": [msg]}})
        r.raise_for_status()
        _bulk_insert(srv, COUNT)
        # renamed last: the newest thread
        http.patch(f"/api/langgraph/threads/{said}", json={"metadata": {"title": "Plain title"}})
    yield srv
    srv.stop()


def _titles(page: Any, list_name: str = "Chat history") -> list[str]:
    return page.get_by_role("list", name=list_name).locator(".thread-title").all_inner_texts()


@pytest.mark.timeout(600)
def test_sidebar_pages_searches_pins_renames_and_deletes(
    context: Any, crowded: LiveServer, request: pytest.FixtureRequest
) -> None:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(crowded.url + "/")
    history = page.get_by_role("list", name="Chat history")
    history.locator(".thread-title").first.wait_for()
    assert _titles(page)[0] == "Plain title"  # newest first
    first_page = len(_titles(page))
    assert first_page == 50

    # scrolling to the end loads the next pages
    started = time.monotonic()
    for _ in range(3):
        loaded = len(_titles(page))
        page.get_by_test_id("thread-list-end").scroll_into_view_if_needed()
        page.wait_for_function(
            "n => document.querySelectorAll('.thread-list .thread-title').length > n", arg=loaded
        )
    assert len(_titles(page)) >= 200
    print(f"\nthree more pages of 50 in {time.monotonic() - started:.2f} s")

    # search: by message text (the title does not say it), then by title
    box = page.get_by_label("Search chats")
    box.fill("quokka")
    results = page.get_by_role("list", name="Search results")
    results.get_by_text("Plain title").wait_for()
    assert _titles(page, "Search results") == ["Plain title"]
    box.fill("chat 0042")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.thread-list .thread-title')]"
        ".map(e => e.textContent).join('|') === 'Chat 0042'"
    )
    box.fill("")

    # pin an old one: it goes to the top, and stays there after a reload
    page.get_by_label("Search chats").fill("chat 0007")
    results.get_by_text("Chat 0007").wait_for()
    page.get_by_role("button", name="Pin Chat 0007").click()
    page.get_by_role("button", name="Unpin Chat 0007").wait_for()
    box.fill("")
    page.reload()
    history.locator(".thread-title").first.wait_for()
    assert _titles(page)[0] == "Chat 0007"
    assert history.locator("li[data-pinned]").count() == 1

    # rename, then find it under its new name; delete it
    item = history.locator("li", has_text="Plain title")
    item.hover()
    page.get_by_role("button", name="Rename Plain title").click()
    page.get_by_label("New title").fill("Marsupials")
    page.get_by_role("button", name="Save", exact=True).click()
    box.fill("marsupials")
    results.get_by_text("Marsupials").wait_for()
    page.get_by_role("button", name="Delete Marsupials").click()
    page.get_by_role("button", name="Delete", exact=True).click()
    results.get_by_text("Marsupials").wait_for(state="detached")
    box.fill("")
    box.fill("quokka")
    page.get_by_text("No chats match.").wait_for()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    box.fill("chat 00")
    page.wait_for_function(
        "() => document.querySelectorAll('.thread-list .thread-title').length > 20"
    )
    page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"))
    assert not errors, errors
