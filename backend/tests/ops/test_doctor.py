"""`pronghorn doctor` checks against real files, sockets, servers and binaries."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from pronghorn.doctor import CheckResult, format_report, run_checks


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No PRONGHORN_* or provider variables from the outer shell; cwd is a fresh folder."""
    for name in list(os.environ):
        if name.startswith("PRONGHORN_") or name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_config(tmp_path: Path, **sections: Any) -> str:
    ui = tmp_path / "ui"
    ui.mkdir(exist_ok=True)
    (ui / "index.html").write_text("<!doctype html>")
    data: dict[str, Any] = {
        "data_dir": str(tmp_path / "data"),
        "server": {"host": "127.0.0.1", "port": free_port(), "static_dir": str(ui)},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def by_name(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {r.name: r for r in results}


class _Handler(BaseHTTPRequestHandler):
    """Answers like a model provider; the test sets `reply` (status, body) per path."""

    replies: dict[str, list[tuple[int, dict[str, Any]]]]
    seen: list[tuple[str, dict[str, str], dict[str, Any]]]

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        self._send(200, {"status": "ok"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        queue = self.replies.get(self.path) or [(404, {"error": "no route"})]
        self._send(*(queue.pop(0) if len(queue) > 1 else queue[0]))


@pytest.fixture
def provider() -> Iterator[ThreadingHTTPServer]:
    handler = type("Handler", (_Handler,), {"replies": {}, "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def provider_url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


# --- config ---------------------------------------------------------------------------------


async def test_healthy_setup_passes_and_reports_text_and_json(tmp_path: Path) -> None:
    results = await run_checks(write_config(tmp_path))
    checks = by_name(results)
    assert {"config", "database", "data_dir", "port", "sandbox", "web UI"} <= set(checks)
    # The sandbox checks depend on the host (bwrap, cgroups); the rest must pass.
    failed = [r for r in results if not r.ok and r.name not in ("sandbox", "sandbox limits")]
    assert failed == []
    text = format_report(results, as_json=False)
    assert "[  ok] port:" in text
    report = json.loads(format_report(results, as_json=True))
    assert {c["name"] for c in report["checks"]} == set(checks)


async def test_invalid_config_fails_with_the_key_and_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("server:\n  prot: 80\n")
    results = await run_checks(str(path))
    assert results[0].name == "config" and not results[0].ok
    assert "prot" in results[0].detail
    assert results[0].hint
    # Config-independent checks still run; config-dependent ones do not guess.
    assert [r.name for r in results] == ["config", "sandbox"]
    report = json.loads(format_report(results, as_json=True))
    assert report["ok"] is False


async def test_missing_config_file_named_explicitly_fails(tmp_path: Path) -> None:
    results = await run_checks(str(tmp_path / "nope.yaml"))
    assert not results[0].ok and "does not exist" in results[0].detail


# --- port -----------------------------------------------------------------------------------


async def test_occupied_port_fails_with_hint(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path, server={"port": port})
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen()
        check = by_name(await run_checks(config))["port"]
    assert not check.ok
    assert str(port) in check.detail
    assert check.hint and "server.port" in check.hint


async def test_port_served_by_a_running_gateway_is_fine(
    tmp_path: Path, provider: ThreadingHTTPServer
) -> None:
    port = provider.server_address[1]  # answers GET /health with 200
    config = write_config(tmp_path, server={"port": port})
    check = by_name(await run_checks(config))["port"]
    assert check.ok and "running Pronghorn" in check.detail


# --- files ----------------------------------------------------------------------------------


async def test_data_dir_that_cannot_be_created_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    config = write_config(tmp_path, data_dir=str(blocker / "data"))
    checks = by_name(await run_checks(config))
    assert not checks["data_dir"].ok and "not a folder" in checks["data_dir"].detail
    assert checks["data_dir"].hint
    assert not checks["database"].ok  # the SQLite file would live there too


async def test_relative_data_dir_resolves_against_base_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "base"
    base.mkdir()
    monkeypatch.setenv("PRONGHORN_BASE_DIR", str(base))
    config = write_config(tmp_path, data_dir="rel-data")
    check = by_name(await run_checks(config))["data_dir"]
    assert check.ok and str(base / "rel-data") in check.detail


async def test_corrupt_sqlite_file_fails(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "pronghorn.db").write_bytes(b"this is not a database" * 200)
    check = by_name(await run_checks(write_config(tmp_path)))["database"]
    assert not check.ok and check.hint and "backup" in check.hint


async def test_migrations_at_head_and_from_a_newer_release(tmp_path: Path) -> None:
    from pronghorn.persistence.migrate import head_revision

    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "pronghorn.db") as db:
        db.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        db.execute("INSERT INTO alembic_version VALUES (?)", (head_revision(),))
    config = write_config(tmp_path)
    checks = by_name(await run_checks(config))
    assert checks["database"].ok
    assert checks["migrations"].ok and "head" in checks["migrations"].detail

    with sqlite3.connect(data / "pronghorn.db") as db:
        db.execute("UPDATE alembic_version SET version_num = 'f00dfeed9999'")
    check = by_name(await run_checks(config))["migrations"]
    assert not check.ok and "newer" in (check.hint or "")


async def test_missing_web_ui_fails_with_build_hint(tmp_path: Path) -> None:
    config = write_config(tmp_path, server={"static_dir": str(tmp_path / "empty")})
    check = by_name(await run_checks(config))["web UI"]
    assert not check.ok and "npm run build" in (check.hint or "")


# --- database and broker servers ------------------------------------------------------------


async def test_unreachable_postgres_and_redis_fail_with_hints(tmp_path: Path) -> None:
    dead = free_port()
    config = write_config(
        tmp_path,
        database={"url": f"postgresql+asyncpg://u:secret-pw@127.0.0.1:{dead}/x"},
        broker={"kind": "redis", "redis_url": f"redis://127.0.0.1:{dead}/0"},
    )
    checks = by_name(await run_checks(config))
    assert not checks["database"].ok and "PostgreSQL" in checks["database"].detail
    assert "secret-pw" not in checks["database"].detail
    assert "--profile scale" in (checks["database"].hint or "")
    assert not checks["broker"].ok and "redis_url" in (checks["broker"].hint or "")


def _reachable(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.skipif(not _reachable(5432), reason="no PostgreSQL on 127.0.0.1:5432")
async def test_local_postgres_is_reachable(tmp_path: Path) -> None:
    url = os.environ.get("PRONGHORN_TEST_POSTGRES_URL") or (
        "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    )
    check = by_name(await run_checks(write_config(tmp_path, database={"url": url})))["database"]
    assert check.ok, check.detail


@pytest.mark.skipif(not _reachable(6379), reason="no Redis on 127.0.0.1:6379")
async def test_local_redis_answers(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, broker={"kind": "redis", "redis_url": "redis://127.0.0.1:6379/0"}
    )
    check = by_name(await run_checks(config))["broker"]
    assert check.ok, check.detail


# --- sandbox --------------------------------------------------------------------------------


async def test_missing_bwrap_fails_unless_isolation_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    check = by_name(await run_checks(write_config(tmp_path)))["sandbox"]
    assert not check.ok and "bubblewrap" in (check.hint or "")
    config = write_config(tmp_path, sandbox={"isolation": "none"})
    assert by_name(await run_checks(config))["sandbox"].ok


async def test_broken_bwrap_reports_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    check = by_name(await run_checks(write_config(tmp_path)))["sandbox"]
    assert not check.ok and "namespace" in check.detail
    assert "user namespaces" in (check.hint or "")


async def test_sandbox_limits_report_each_limit_and_its_mechanism(tmp_path: Path) -> None:
    limits = {"processes": 64, "memory_bytes": 512 * 1024 * 1024, "workspace_quota_bytes": 0}
    results = await run_checks(write_config(tmp_path, sandbox={"limits": limits}))
    check = by_name(results)["sandbox limits"]
    data = check.data
    assert data is not None
    assert data["processes"]["value"] == 64
    assert data["memory_bytes"]["value"] == 512 * 1024 * 1024
    assert data["workspace_quota_bytes"] == {"value": 0, "enforced_by": None}
    assert "workspace quota off" in check.detail and "memory 512 MiB" in check.detail
    if data["isolation"] == "bwrap":
        assert data["seccomp"] is True and "seccomp on" in check.detail
        assert data["tmp_bytes"]["enforced_by"] == "tmpfs"
    assert data["cpu_seconds"]["enforced_by"] == "rlimit"
    assert data["file_size_bytes"]["enforced_by"] == "rlimit"
    if data["cgroup"]:
        assert data["processes"]["enforced_by"] == f"cgroup v{data['cgroup']}"
    report = json.loads(format_report(results, as_json=True))
    entry = next(c for c in report["checks"] if c["name"] == "sandbox limits")
    assert entry["data"]["processes"]["value"] == 64


async def test_sandbox_limits_say_what_does_not_hold(tmp_path: Path) -> None:
    sandbox = {"limits": {"cgroup": "off", "seccomp": False}}
    check = by_name(await run_checks(write_config(tmp_path, sandbox=sandbox)))["sandbox limits"]
    data = check.data
    assert data is not None and data["cgroup"] is None and data["seccomp"] is False
    assert "seccomp off (sandbox.limits.seccomp is off)" in check.detail
    assert data["memory_bytes"]["enforced_by"] == "rlimit"
    if os.geteuid() == 0 and data["refusal"]:
        # RLIMIT_NPROC does not bind root, and the per-sandbox host uid cannot reach this
        # data dir (pytest's folders are 0700): doctor says commands are refused, and why.
        assert data["processes"]["enforced_by"] is None
        assert not check.ok and "pids cgroup" in (check.hint or "")
        assert "processes 256 (NOT enforced)" in check.detail
        assert "commands are REFUSED" in check.detail and "root" in check.detail
    elif os.geteuid() == 0:
        assert data["processes"]["enforced_by"] == "rlimit, a host uid per sandbox"
    elif data["isolation"] == "bwrap":
        assert data["processes"]["enforced_by"] == "rlimit" and check.ok


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds a non-root gateway")
async def test_sandbox_limits_fail_closed_as_root_without_any_process_bound(
    tmp_path: Path,
) -> None:
    sandbox = {"limits": {"cgroup": "off", "host_uid_base": 0}}
    check = by_name(await run_checks(write_config(tmp_path, sandbox=sandbox)))["sandbox limits"]
    assert not check.ok
    assert "commands are REFUSED" in check.detail
    assert "sandbox.limits.host_uid_base is 0" in check.detail
    assert "writable pids cgroup" in (check.hint or "")


# --- models ---------------------------------------------------------------------------------


async def test_model_without_key_fails_offline(tmp_path: Path) -> None:
    models = [
        {"name": "gpt", "provider": "openai", "model": "gpt-4o-mini"},
        {"name": "claude", "provider": "anthropic", "model": "claude-x"},
        {
            "name": "local",
            "provider": "openai",
            "model": "llama",
            "base_url": "http://127.0.0.1:9/v1",
        },
        {"name": "fake", "provider": "scripted"},
    ]
    checks = by_name(await run_checks(write_config(tmp_path, models=models)))
    assert not checks["model gpt"].ok and "OPENAI_API_KEY" in (checks["model gpt"].hint or "")
    assert not checks["model claude"].ok
    assert "ANTHROPIC_API_KEY" in (checks["model claude"].hint or "")
    assert checks["model local"].ok  # local OpenAI-compatible servers take no key
    assert checks["model fake"].ok


async def test_key_from_environment_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    models = [{"name": "gpt", "provider": "openai", "model": "gpt-4o-mini"}]
    check = by_name(await run_checks(write_config(tmp_path, models=models)))["model gpt"]
    assert check.ok and "sk-env" not in check.detail


async def test_online_openai_compatible_ping(tmp_path: Path, provider: ThreadingHTTPServer) -> None:
    provider.RequestHandlerClass.replies["/v1/chat/completions"] = [
        (
            400,
            {
                "error": {
                    "message": "Unsupported parameter: 'max_tokens'; use 'max_completion_tokens'"
                }
            },
        ),
        (200, {"choices": [{"message": {"content": "p"}}]}),
    ]
    models = [
        {
            "name": "m",
            "provider": "openai",
            "model": "reasoner",
            "api_key": "sk-test-123",
            "base_url": f"{provider_url(provider)}/v1",
        }
    ]
    check = by_name(await run_checks(write_config(tmp_path, models=models), online=True))["model m"]
    assert check.ok, check.detail
    seen = provider.RequestHandlerClass.seen
    assert [s[0] for s in seen] == ["/v1/chat/completions"] * 2
    assert seen[0][1]["authorization"] == "Bearer sk-test-123"
    assert seen[0][2]["max_tokens"] == 1 and seen[1][2]["max_completion_tokens"] == 1


async def test_online_rejected_key_and_unknown_model(
    tmp_path: Path, provider: ThreadingHTTPServer
) -> None:
    replies = provider.RequestHandlerClass.replies
    replies["/bad/chat/completions"] = [(401, {"error": {"message": "invalid api key"}})]
    base = provider_url(provider)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    models = [
        {"name": n, "provider": "openai", "model": "x", "api_key": "k", "base_url": url}
        for n, url in (("bad", f"{base}/bad"), ("gone", f"{base}/gone"), ("down", dead))
    ]
    checks = by_name(await run_checks(write_config(tmp_path, models=models), online=True))
    assert not checks["model bad"].ok and "rejected the key" in (checks["model bad"].hint or "")
    assert not checks["model gone"].ok and "models[].model" in (checks["model gone"].hint or "")
    assert not checks["model down"].ok and "cannot reach" in checks["model down"].detail


async def test_online_anthropic_ping(tmp_path: Path, provider: ThreadingHTTPServer) -> None:
    provider.RequestHandlerClass.replies["/v1/messages"] = [
        (200, {"type": "message", "content": [{"type": "text", "text": "p"}]})
    ]
    models = [
        {
            "name": "c",
            "provider": "anthropic",
            "model": "claude-test",
            "api_key": "sk-ant",
            "base_url": provider_url(provider),
        }
    ]
    check = by_name(await run_checks(write_config(tmp_path, models=models), online=True))["model c"]
    assert check.ok, check.detail
    path, headers, body = provider.RequestHandlerClass.seen[0]
    assert path == "/v1/messages" and headers["x-api-key"] == "sk-ant"
    assert headers["anthropic-version"] and body["max_tokens"] == 1


async def test_port_of_the_image_entrypoint_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the container `pronghorn serve` gets --host/--port from PRONGHORN_HOST/PORT."""
    config = write_config(tmp_path)  # server.port is free
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        monkeypatch.setenv("PRONGHORN_HOST", "127.0.0.1")
        monkeypatch.setenv("PRONGHORN_PORT", str(port))
        check = by_name(await run_checks(config))["port"]
    assert not check.ok
    assert f"127.0.0.1:{port}" in check.detail and "PRONGHORN_PORT" in check.detail
    monkeypatch.setenv("PRONGHORN_PORT", "http")
    check = by_name(await run_checks(config))["port"]
    assert not check.ok and "not a port number" in check.detail and check.hint
