"""docker/entrypoint.sh, run for real with a recording `pronghorn` first on PATH."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
ENTRYPOINT = REPO / "docker" / "entrypoint.sh"

# Records its pid and argv, then waits for SIGTERM (like the server) when asked to.
RECORDER = """#!/bin/sh
python3 -c 'import json,os,sys; print(json.dumps({"pid": os.getppid(), "argv": sys.argv[1:]}))' "$@"
if [ "${RECORDER_WAIT:-}" = 1 ]; then
    trap 'echo got-TERM; exit 0' TERM
    while :; do sleep 0.05; done
fi
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    recorder = bin_dir / "pronghorn"
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    data = tmp_path / "data"
    data.mkdir()
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "PRONGHORN_DATA_DIR": str(data),
        "HOME": str(tmp_path),
    }


def run(env: dict[str, str], *args: str) -> tuple[int, dict[str, object] | None, str]:
    proc = subprocess.run(
        ["sh", str(ENTRYPOINT), *args], env=env, capture_output=True, text=True, timeout=30
    )
    first = proc.stdout.splitlines()[0] if proc.stdout.strip() else ""
    return proc.returncode, (json.loads(first) if first.startswith("{") else None), proc.stderr


def test_default_is_serve_with_env_defaults(env: dict[str, str]) -> None:
    code, record, _ = run(env)
    assert code == 0 and record is not None
    assert record["argv"] == [
        "serve", "--host", "0.0.0.0", "--port", "2026", "--workers", "1",
    ]  # fmt: skip


def test_env_and_existing_config_are_passed(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("{}\n")
    env |= {
        "PRONGHORN_CONFIG": str(config),
        "PRONGHORN_HOST": "127.0.0.1",
        "PRONGHORN_PORT": "8080",
        "PRONGHORN_WORKERS": "2",
    }
    code, record, _ = run(env, "--log-level", "debug")
    assert code == 0 and record is not None
    assert record["argv"] == [
        "serve", "--host", "127.0.0.1", "--port", "8080", "--workers", "2",
        "--config", str(config), "--log-level", "debug",
    ]  # fmt: skip


def test_missing_config_file_falls_back_to_defaults(env: dict[str, str], tmp_path: Path) -> None:
    env["PRONGHORN_CONFIG"] = str(tmp_path / "absent.yaml")
    code, record, stderr = run(env)
    assert code == 0 and record is not None
    argv = record["argv"]
    assert isinstance(argv, list) and "--config" not in argv
    assert "no config file" in stderr


def test_config_path_that_is_a_directory_stops_with_a_hint(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "config.yaml").mkdir()
    env["PRONGHORN_CONFIG"] = str(tmp_path / "config.yaml")
    code, record, stderr = run(env)
    assert code == 64 and record is None
    assert "is a directory" in stderr and "config.example.yaml" in stderr


def test_subcommands_and_other_commands(env: dict[str, str]) -> None:
    code, record, _ = run(env, "doctor", "--json")
    assert code == 0 and record is not None and record["argv"] == ["doctor", "--json"]
    code, record, _ = run(env, "pronghorn", "migrate")
    assert code == 0 and record is not None and record["argv"] == ["migrate"]
    proc = subprocess.run(
        ["sh", str(ENTRYPOINT), "echo", "plain"], env=env, capture_output=True, text=True
    )
    assert proc.stdout.strip() == "plain"


def test_server_replaces_the_shell_and_gets_sigterm(env: dict[str, str]) -> None:
    env["RECORDER_WAIT"] = "1"
    proc = subprocess.Popen(
        ["sh", str(ENTRYPOINT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        record = json.loads(proc.stdout.readline())
        # exec: the process we started *is* the server, so `docker stop` signals it directly.
        assert record["pid"] == proc.pid
        time.sleep(0.2)
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and "got-TERM" in out
