"""Commands: scrubbed environment, timeouts that kill the whole tree, output caps, virtual
paths — a conformance suite run on the local provider in both isolation modes (bwrap is
skipped only when it cannot run here) and on the container provider."""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pronghorn.sandbox import Sandbox, SandboxError

from .conftest import SANDBOX_KINDS, MakeProvider, open_sandbox

ALLOWED_ENV = {"PATH", "HOME", "LANG", "TERM", "TMPDIR", "PWD", "SHLVL", "_"}


@pytest.fixture(params=SANDBOX_KINDS)
async def sandbox(
    request: pytest.FixtureRequest, data_dir: Path, thread_id: str
) -> AsyncIterator[Sandbox]:
    async with open_sandbox(
        request.param, data_dir, thread_id, command_timeout_s=10, max_output_chars=2000
    ) as sb:
        yield sb


async def test_runs_in_workspace_with_virtual_paths(sandbox: Sandbox) -> None:
    r = await sandbox.execute(
        "pwd; echo hi > /mnt/user-data/outputs/o.txt; cat /mnt/user-data/outputs/o.txt; "
        "echo w > rel.txt; echo err >&2; exit 3"
    )
    assert r.exit_code == 3
    assert r.stdout == "/mnt/user-data/workspace\nhi\n"
    assert r.stderr == "err\n"
    assert not r.timed_out and not r.truncated
    assert (sandbox.thread_paths.outputs / "o.txt").read_text() == "hi\n"
    assert (sandbox.thread_paths.workspace / "rel.txt").read_text() == "w\n"
    # The host location never shows up in what the model sees.
    r = await sandbox.execute("ls -d /mnt/user-data/uploads; echo $HOME")
    assert r.stdout == "/mnt/user-data/uploads\n/mnt/user-data/workspace\n"


async def test_environment_is_scrubbed(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("PRONGHORN_DATABASE__URL", "postgresql://u:pw@db/x")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("LD_PRELOAD", "/tmp/evil.so")
    r = await sandbox.execute("env")
    assert r.exit_code == 0
    assert "sk-secret" not in r.stdout and "ghp_secret" not in r.stdout
    names = {line.split("=", 1)[0] for line in r.stdout.splitlines() if "=" in line}
    assert names <= ALLOWED_ENV, names - ALLOWED_ENV
    assert {"PATH", "HOME", "LANG", "TERM", "TMPDIR"} <= names
    r = await sandbox.execute(
        "cat /proc/$PPID/environ /proc/1/environ 2>/dev/null | tr '\\0' '\\n'"
    )
    assert "sk-secret" not in r.stdout


def _alive_with(marker: str) -> list[int]:
    """Host pids (not zombies) whose command line contains ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(pid))
    return found


async def test_timeout_kills_grandchildren(sandbox: Sandbox) -> None:
    marker = f"{uuid.uuid4().int % 10**6 + 500}.{uuid.uuid4().int % 1000}"
    # A child shell with two grandchildren of its own, plus a nohup'd background job.
    command = (
        f"bash -c 'sleep {marker} & sleep {marker} & wait' & "
        f"nohup sleep {marker} >/dev/null 2>&1 & "
        f"sleep {marker}"
    )
    started = time.monotonic()
    task = asyncio.create_task(sandbox.execute(command, timeout_s=1.5))
    for _ in range(100):
        if len(_alive_with(marker)) >= 4:
            break
        await asyncio.sleep(0.02)
    assert len(_alive_with(marker)) >= 4
    r = await task
    assert r.timed_out
    assert r.exit_code != 0
    assert "timed out" in r.stderr
    assert time.monotonic() - started < 8
    for _ in range(100):
        if not _alive_with(marker):
            break
        await asyncio.sleep(0.05)
    assert _alive_with(marker) == []


async def test_background_job_does_not_hold_the_call(sandbox: Sandbox) -> None:
    marker = f"{uuid.uuid4().int % 10**6 + 500}.{uuid.uuid4().int % 1000}"
    started = time.monotonic()
    r = await sandbox.execute(f"sleep {marker} & echo started")
    assert r.stdout == "started\n" and not r.timed_out
    assert time.monotonic() - started < 5
    for _ in range(100):
        if not _alive_with(marker):
            break
        await asyncio.sleep(0.05)
    assert _alive_with(marker) == []


async def test_output_is_capped(sandbox: Sandbox) -> None:
    r = await sandbox.execute("seq 1 20000; seq 1 10000 >&2")
    assert r.exit_code == 0 and r.truncated
    assert len(r.stdout) < 2100 and len(r.stderr) < 2100
    assert r.stdout.startswith("1\n2\n3\n")
    assert r.stdout.endswith("19999\n20000\n")  # the tail is kept too
    assert "characters truncated" in r.stdout


async def test_endless_output_is_stopped(sandbox: Sandbox) -> None:
    started = time.monotonic()
    r = await sandbox.execute("yes 'spam spam spam'", timeout_s=30)
    assert r.truncated
    assert not r.timed_out
    assert time.monotonic() - started < 15
    assert "far beyond the output cap" in r.stderr
    assert len(r.stdout) < 2100


async def test_multibyte_output(sandbox: Sandbox) -> None:
    r = await sandbox.execute("printf 'h\\xc3\\xa9llo \\xe2\\x82\\xac\\n'")
    assert r.stdout == "héllo €\n"


async def test_bad_commands(sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError):
        await sandbox.execute("   ")
    with pytest.raises(SandboxError):
        await sandbox.execute("echo \x00")
    r = await sandbox.execute("definitely-not-a-command-xyz")
    assert r.exit_code == 127


async def test_event_loop_stays_responsive(sandbox: Sandbox) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    t = asyncio.create_task(ticker())
    await sandbox.execute("sleep 0.5")
    t.cancel()
    assert ticks >= 20


async def test_falls_back_to_none_loudly_without_bwrap(
    make_provider: MakeProvider,
    thread_id: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    provider = make_provider(isolation="bwrap")
    assert provider.isolation_in_effect is None
    with caplog.at_level(logging.WARNING, logger="pronghorn.sandbox"):
        sb = await provider.acquire("alice", thread_id)
    assert provider.isolation_in_effect == "none"
    assert "SANDBOX ISOLATION DISABLED" in caplog.text
    r = await sb.execute("echo ok")
    assert r.stdout == "ok\n"


@pytest.mark.parametrize(
    ("command", "timeout_s", "message"),
    [
        ("", None, "The command is empty."),
        ("   \n", None, "The command is empty."),
        ("echo a\x00b", None, "The command contains a NUL byte."),
        ("true", 0, "timeout must be positive."),
        ("true", -1.5, "timeout must be positive."),
    ],
)
async def test_refuses_what_no_provider_runs(
    sandbox: Sandbox, command: str, timeout_s: float | None, message: str
) -> None:
    """Every provider refuses the same bad calls with the same words, before running anything."""
    with pytest.raises(SandboxError, match=message.replace(".", r"\.")):
        await sandbox.execute(command, timeout_s=timeout_s)
