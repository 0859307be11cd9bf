"""The MCP servers settings page in Chromium, against a live gateway with a real FastMCP
server over stdio and one over streamable HTTP; then a chat whose tool card names the server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from browser.helpers import SCREENSHOTS, send, wait_idle
from mcp_client.fixture_server import http_app
from mcp_client.servers import Served
from support.live import TESTS_DIR, LiveServer, base_config

SCRIPT = str(TESTS_DIR / "mcp_client" / "fixture_server.py")
RULES = [
    {
        "match": "add please",
        "steps": [
            {"tool_calls": [{"name": "fx_add", "args": {"a": 20, "b": 22}}]},
            {"text": "The MCP server says 42."},
        ],
    }
]


@pytest.fixture(scope="module")
def http_mcp() -> Iterator[Served]:
    with Served(http_app()) as served:
        yield served


@pytest.fixture(scope="module")
def mcp_server(ui_built: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    cfg = base_config(
        models=[{"name": "s", "display_name": "Scripted", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        mcp={
            "servers": {
                "fx": {
                    "command": sys.executable,
                    "args": [SCRIPT],
                    "env": {"FX_SECRET": "literal-secret"},
                    "description": "the fixture over stdio",
                }
            }
        },
    )
    srv = LiveServer(tmp_path_factory.mktemp("mcp-ui"), cfg).start()
    yield srv
    srv.stop()


@pytest.fixture
def mcp_page(context: Any, mcp_server: LiveServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if not pg.is_closed():
        pg.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    assert not errors, f"uncaught errors in the page: {errors}"


def _server(page: Any, name: str) -> Any:
    return page.locator(f"[data-testid=mcp-server][data-name={name}]")


def _stored(srv: LiveServer) -> dict[str, Any]:
    return yaml.safe_load(srv.config_path.read_text())["mcp"]["servers"]


def test_mcp_page_lists_adds_edits_tests_and_removes(
    mcp_page: Any, mcp_server: LiveServer, http_mcp: Served
):
    page = mcp_page
    page.goto(mcp_server.url + "/")
    page.get_by_role("button", name="MCP servers").click()
    page.wait_for_url("**/settings/mcp")
    fx = _server(page, "fx")
    fx.get_by_test_id("mcp-status").filter(has_text="connected").wait_for(timeout=60_000)
    assert "fx_add" in fx.get_by_test_id("mcp-tools").inner_text()
    assert "the fixture over stdio" in fx.inner_text()

    # edit: the secret is shown masked and kept when saved unchanged
    fx.get_by_role("button", name="Edit").click()
    env = page.get_by_label("Environment (KEY=value, one per line; use ${VAR})")
    assert env.input_value() == "FX_SECRET=***"
    page.get_by_label("Description").fill("stdio fixture, edited")
    page.get_by_role("button", name="Save").click()
    fx.get_by_text("stdio fixture, edited").wait_for()
    stored = _stored(mcp_server)["fx"]
    assert stored["env"] == {"FX_SECRET": "literal-secret"}
    assert stored["description"] == "stdio fixture, edited"

    # add: a broken server fails its test; the right URL passes and is saved
    page.get_by_role("button", name="Add server").click()
    page.get_by_label("Name", exact=True).fill("web")
    page.get_by_label("Transport").select_option("http")
    page.get_by_label("URL").fill("http://127.0.0.1:9/mcp")
    page.get_by_role("button", name="Test connection").click()
    result = page.get_by_test_id("mcp-test-result")
    result.filter(has_text="Failed").wait_for(timeout=60_000)
    page.get_by_label("URL").fill(f"{http_mcp.url}/mcp")
    page.get_by_label("Headers (Name: value, one per line)").fill("X-Api-Key: abc123")
    page.get_by_role("button", name="Test connection").click()
    result.filter(has_text="Connected").wait_for(timeout=60_000)
    assert "add" in result.inner_text()
    page.get_by_role("button", name="Save").click()
    web = _server(page, "web")
    web.get_by_test_id("mcp-status").filter(has_text="connected").wait_for(timeout=60_000)
    assert "web_echo" in web.get_by_test_id("mcp-tools").inner_text()
    assert _stored(mcp_server)["web"]["headers"] == {"X-Api-Key": "abc123"}
    web.get_by_role("button", name="Edit").click()
    assert (
        page.get_by_label("Headers (Name: value, one per line)").input_value() == "X-Api-Key: ***"
    )
    page.get_by_role("button", name="Cancel").click()

    # disable, then remove
    page.get_by_label("Enable web").uncheck()
    web.get_by_test_id("mcp-status").filter(has_text="disabled").wait_for()
    assert _stored(mcp_server)["web"]["enabled"] is False
    web.get_by_role("button", name="Remove web").click()
    web.get_by_role("button", name="Remove", exact=True).click()
    web.wait_for(state="detached")
    assert set(_stored(mcp_server)) == {"fx"}


def test_tool_card_names_the_mcp_server(mcp_page: Any, mcp_server: LiveServer):
    page = mcp_page
    page.goto(mcp_server.url + "/settings/mcp")
    _server(page, "fx").get_by_test_id("mcp-status").filter(has_text="connected").wait_for(
        timeout=60_000
    )
    page.goto(mcp_server.url + "/")
    send(page, "add please")
    wait_idle(page, timeout_ms=60_000)
    card = page.get_by_test_id("tool-card").first
    assert card.get_by_test_id("tool-server").inner_text() == "MCP · fx"
    assert "fx_add" in card.inner_text()
    assert "The MCP server says 42." in page.inner_text("body")
    Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
