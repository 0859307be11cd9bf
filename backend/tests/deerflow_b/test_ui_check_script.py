"""The pieces of `scripts/deerflow-ui-check` that run without DeerFlow's sources: its
arguments, where it finds the frontend, the Pronghorn config it writes (valid for the real
schema), and its failure collector, on a real Chromium page that makes failing requests."""

from __future__ import annotations

import http.server
import importlib.machinery
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from pronghorn.config.schema.app import AppConfig

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "deerflow-ui-check"
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def check() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("deerflow_ui_check", str(SCRIPT))
    spec = importlib.util.spec_from_loader("deerflow_ui_check", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["deerflow_ui_check"] = module  # its dataclasses look their module up
    loader.exec_module(module)
    return module


def test_arguments(check: ModuleType) -> None:
    args = check.parse_args([])
    assert args.source == check.DEFAULT_SOURCE and args.ref is None and args.allow == []
    assert args.pronghorn_port == 8001  # where DeerFlow's memory route handlers call
    with pytest.raises(SystemExit):
        check.parse_args(["--pronghorn-port", "0"])
    args = check.parse_args(
        ["--source", "/src/deer-flow", "--ref", "v2", "--allow", "/favicon", "--timeout", "30"]
    )
    assert (args.source, args.ref, args.allow, args.timeout) == (
        "/src/deer-flow",
        "v2",
        ["/favicon"],
        30.0,
    )
    with pytest.raises(SystemExit):
        check.parse_args(["--timeout", "0"])
    assert check.is_url("https://github.com/bytedance/deer-flow")
    assert check.is_url("git@github.com:bytedance/deer-flow.git")
    assert not check.is_url("../deer-flow")
    assert check.clone_command("https://x/y", "main", Path("/w/d")) == [
        "git", "clone", "--depth", "1", "--branch", "main", "https://x/y", "/w/d",
    ]  # fmt: skip


def test_dev_mode_serves_deerflow_without_a_build(check: ModuleType) -> None:
    assert check.parse_args([]).dev is False
    assert check.parse_args(["--dev"]).dev is True
    assert check.deerflow_command(True, 3000)[-3:] == ["dev", "-p", "3000"]  # next dev
    assert check.deerflow_command(False, 3000)[-3:] == ["start", "-p", "3000"]  # next start


def test_finds_the_frontend_of_a_checkout(check: ModuleType, tmp_path: Path) -> None:
    front = tmp_path / "frontend"
    front.mkdir()
    (front / "package.json").write_text("{}")
    (front / "next.config.js").write_text("")
    assert check.frontend_dir(tmp_path) == front
    assert check.frontend_dir(front) == front
    with pytest.raises(SystemExit):
        check.frontend_dir(tmp_path / "nothing")


def test_the_pronghorn_config_is_valid(check: ModuleType, tmp_path: Path) -> None:
    raw = check.pronghorn_config(tmp_path / "data", 9999, "http://localhost:3000")
    config = AppConfig.model_validate(raw)
    assert config.auth.mode == "local" and config.server.cors_origins == ["http://localhost:3000"]
    env = check.deerflow_env("http://127.0.0.1:9999", "http://localhost:3000")
    assert env["DEER_FLOW_INTERNAL_GATEWAY_BASE_URL"] == "http://127.0.0.1:9999"
    assert not any(k.startswith("NEXT_PUBLIC_") for k in env)


def test_the_collector_alone(check: ModuleType) -> None:
    collector = check.FailureCollector(allow=["/ignored"])
    collector.screen = "memory"
    collector.on_response("GET", "http://h/api/memory", 200)
    collector.on_response("GET", "http://h/api/memory", 500)
    collector.on_response("GET", "http://h/ignored/x", 404)
    collector.on_request_failed("GET", "http://h/a", "net::ERR_ABORTED")
    collector.on_request_failed("GET", "http://h/b", "net::ERR_CONNECTION_REFUSED")
    collector.on_page_error("TypeError: x is undefined\n    at foo")
    assert [str(f) for f in collector.failures] == [
        "[memory] http: GET http://h/api/memory -> 500",
        "[memory] network: GET http://h/b: net::ERR_CONNECTION_REFUSED",
        "[memory] page-error: TypeError: x is undefined",
    ]
    assert collector.report().startswith("FAIL: 3 failure(s) in 3 responses")
    assert check.FailureCollector().report() == "PASS: 0 responses, none failed"


PAGE = b"""<!doctype html><title>t</title><script>
fetch('/api/missing').then(() => fetch('/api/ok')).then(() => {
  document.title = 'done';
  setTimeout(() => { throw new Error('boom from the page'); }, 0);
  setTimeout(() => { document.title = 'thrown'; }, 10);
});
</script>"""


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, body = {"/": (200, PAGE), "/api/ok": (200, b"{}")}.get(self.path, (404, b"no"))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_collector_on_a_real_page(check: ModuleType, site: str) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing")
    sync_api = pytest.importorskip("playwright.sync_api")
    collector = check.FailureCollector()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), args=check.CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page()
            collector.attach(page)
            collector.screen = "probe"
            page.goto(site + "/")
            page.wait_for_function("document.title === 'thrown'", timeout=30_000)
        finally:
            browser.close()
    kinds = sorted((f.kind, f.what.split(" -> ")[-1]) for f in collector.failures)
    assert ("http", "404") in kinds
    assert any(
        f.kind == "page-error" and "boom from the page" in f.what for f in collector.failures
    )
    assert not any("/api/ok" in f.what for f in collector.failures)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a parent to reap it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_server_stops_with_its_children(check: ModuleType, tmp_path: Path) -> None:
    # pnpm -> next -> next-server: stopping pnpm alone left Next holding the port
    pid_file = tmp_path / "child.pid"
    script = f"sleep 600 & echo $! > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; wait"
    with check.started(["sh", "-c", script], tmp_path, dict(os.environ), tmp_path / "log"):
        _wait_until(pid_file.exists, "the child never started")
        child = int(pid_file.read_text())
        assert _alive(child)
    _wait_until(lambda: not _alive(child), "the grandchild outlived the server")
