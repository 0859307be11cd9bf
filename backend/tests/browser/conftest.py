"""Browser tests: Debian's Chromium (never a downloaded one) driven by Python Playwright
against a real `pronghorn serve` that serves the built UI (frontend/dist).

One gateway and one browser for the whole session; each test gets a fresh browser context
(so sessionStorage/localStorage start empty) and saves a screenshot of its final state under
``backend/test-results/browser/<test-name>.png``.

The UI is built here when ``frontend/dist`` is missing or older than its sources (``make
test`` builds it first anyway); the tests skip only when there is no build and no npm.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser.helpers import (
    LONG_WORDS,
    RESUME_WORDS,
    SCREENSHOTS,
    SECOND_MODEL_ANSWER,
    SUGGESTIONS,
)
from support.live import BACKEND_DIR, LiveServer, base_config

# Never let the playwright package fetch a browser (we only use /usr/bin/chromium).
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

REPO = BACKEND_DIR.parent
FRONTEND = REPO / "frontend"
DIST_INDEX = FRONTEND / "dist" / "index.html"
CHROMIUM = Path(os.environ.get("PRONGHORN_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_config() -> dict[str, Any]:
    """Models: the demo (default), a slow scripted one, a second one for the picker, and the
    one that writes follow-up suggestions."""
    return base_config(
        models=[
            {"name": "demo", "display_name": "Offline demo model", "provider": "demo"},
            {
                "name": "slow",
                "display_name": "Slow scripted model",
                "provider": "scripted",
                "rules": [
                    {"match": ["resume"], "text": " ".join(RESUME_WORDS), "delay_s": 0.08},
                    {"text": " ".join(LONG_WORDS), "delay_s": 0.25},
                ],
            },
            {
                "name": "second",
                "display_name": "Second scripted model",
                "provider": "scripted",
                "rules": [{"text": SECOND_MODEL_ANSWER}],
            },
            {
                "name": "suggester",
                "display_name": "Suggestions (scripted)",
                "provider": "scripted",
                "rules": [{"text": "\n".join(SUGGESTIONS)}],
            },
        ],
        agent={"default_model": "demo"},
        suggestions={"enabled": True, "model": "suggester"},
    )


def _sources_newer_than_dist() -> bool:
    stamp = DIST_INDEX.stat().st_mtime
    paths = [FRONTEND / "index.html", FRONTEND / "package.json", FRONTEND / "vite.config.ts"]
    paths += [p for p in (FRONTEND / "src").rglob("*") if p.is_file()]
    return any(p.exists() and p.stat().st_mtime > stamp for p in paths)


@pytest.fixture(scope="package")
def ui_built() -> None:
    npm = shutil.which("npm")
    if npm is None:
        if not DIST_INDEX.exists():
            pytest.skip("the web UI is not built (frontend/dist) and npm is not installed")
        return
    if DIST_INDEX.exists() and not _sources_newer_than_dist():
        return
    if not (FRONTEND / "node_modules").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True)
    subprocess.run([npm, "run", "build"], cwd=FRONTEND, check=True, capture_output=True)


@pytest.fixture(scope="package")
def ui_server(ui_built: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = LiveServer(tmp_path_factory.mktemp("browser"), browser_config()).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make install-browser installs Debian's chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 820}, accept_downloads=True)
    ctx.set_default_timeout(15_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: Any, ui_server: LiveServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A page on the UI; page errors fail the test; a screenshot is saved at the end."""
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.goto(ui_server.url + "/")
    yield pg
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.replace("/", "_")
    if not getattr(pg, "_shot_taken", False) and not pg.is_closed():
        pg.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)
    assert not errors, f"uncaught errors in the page: {errors}"
