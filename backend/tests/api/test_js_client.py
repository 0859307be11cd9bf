"""The official JS SDK (`@langchain/langgraph-sdk`, pinned in tests/js) against a live server
with auth on, authenticating with an API key made by the CLI (`apiKey`, the x-api-key
header); the script also checks that a client without the key is refused."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from api.conftest import api_key
from support.live import LiveServer

JS_DIR = Path(__file__).resolve().parents[3] / "tests" / "js"


@pytest.fixture(scope="module")
def js_project() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the JS SDK conformance script cannot run")
    if not (JS_DIR / "node_modules" / "@langchain" / "langgraph-sdk").is_dir():
        npm = shutil.which("npm")
        assert npm, "node is installed but npm is not: cannot install the pinned JS SDK"
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=JS_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    return JS_DIR


def test_js_sdk_conformance(js_project: Path, live_server: LiveServer) -> None:
    server = live_server
    key = api_key(server)
    done = subprocess.run(
        ["node", "conformance.mjs", server.api, key],
        cwd=js_project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (
        f"{done.stdout}\n{done.stderr}\n--- server log ---\n{server.logs()}"
    )
    assert "all checks passed" in done.stdout
