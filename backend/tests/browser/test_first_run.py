"""First run: a gateway started with no config file at all (as `make dev` on a fresh clone)
lets an admin save a settings page; the file is created in its data dir, applied at once,
and read again at the next start."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from browser.helpers import SCREENSHOTS
from support.live import LiveServer

# What a test config would say, given as environment overrides (there is no file).
ENV = {
    "PRONGHORN_DATA_DIR": "data",
    "PRONGHORN_AUTH__MODE": "none",
    "PRONGHORN_MEMORY__ENABLED": "false",
    "PRONGHORN_LOGGING__LEVEL": "INFO",
}


@pytest.fixture(scope="module")
def bare_server(ui_built: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = LiveServer(tmp_path_factory.mktemp("first-run"), {}, env=ENV, config_file=False)
    srv.start()
    yield srv
    srv.stop()


def test_settings_save_without_a_config_file(
    context: Any, bare_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    srv = bare_server
    saved = srv.workdir / "data" / "config.yaml"
    assert not saved.exists() and not srv.config_path.exists()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(srv.url + "/settings/mcp")
    page.get_by_role("button", name="Add server").click()
    assert page.get_by_text("start it with --config").count() == 0
    page.get_by_label("Name", exact=True).fill("web")
    page.get_by_label("Transport").select_option("http")
    page.get_by_label("URL").fill("http://127.0.0.1:9/mcp")
    page.get_by_role("button", name="Save").click()
    page.locator("[data-testid=mcp-server][data-name=web]").wait_for(timeout=60_000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    assert not errors, errors

    stored = yaml.safe_load(saved.read_text())
    assert stored["mcp"]["servers"]["web"]["url"] == "http://127.0.0.1:9/mcp"
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        view = http.get("/api/mcp/config").json()
        assert view["writable"] is True and view["source_path"] == str(saved)
        status = http.get("/api/config/status").json()
        assert status["last_error"] is None

    # the next start (still no --config) reads the saved file
    srv.stop()
    srv.start()
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        assert "web" in http.get("/api/mcp/config").json()["mcp_servers"]
        assert http.get("/api/config/status").json()["source_path"] == str(saved)
