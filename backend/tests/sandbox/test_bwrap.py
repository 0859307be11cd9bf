"""What a command can and cannot reach under isolation=bwrap, and the fallback to none."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pronghorn.sandbox import LocalSandbox, ThreadPaths

from .conftest import MakeProvider, needs_bwrap

pytestmark = needs_bwrap
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
async def jailed(make_provider: MakeProvider, thread_id: str) -> AsyncIterator[LocalSandbox]:
    provider = make_provider(isolation="bwrap", command_timeout_s=10)
    sb = await provider.acquire("alice", thread_id)
    assert provider.isolation_in_effect == "bwrap"
    assert isinstance(sb, LocalSandbox)
    yield sb


async def test_etc_shadow_not_readable(jailed: LocalSandbox) -> None:
    r = await jailed.execute("cat /etc/shadow; cat /etc/gshadow; ls /etc")
    assert "root:" not in r.stdout
    assert "No such file" in r.stderr
    assert "passwd" in r.stdout.split()  # the allow-listed /etc files are there


async def test_host_files_invisible(
    jailed: LocalSandbox, data_dir: Path, tmp_path: Path, thread_id: str
) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text("models: [{api_key: sk-secret}]")
    other = ThreadPaths.for_thread(data_dir, "bob", str(uuid.uuid4()))
    other.ensure()
    (other.workspace / "bob.txt").write_text("bob's data")
    hidden = [
        str(config_file),
        str(REPO),
        str(REPO / "backend/src/pronghorn/config/schema/app.py"),
        str(data_dir),
        str(other.workspace / "bob.txt"),
        str(jailed.thread_paths.root),  # even its own host path: only the virtual one exists
        "/root",
        "/home",
        "/work",
        "/var",
    ]
    script = "; ".join(f"test -e {p} && echo VISIBLE:{p}" for p in hidden) + "; true"
    r = await jailed.execute(script)
    assert r.exit_code == 0
    assert "VISIBLE" not in r.stdout, r.stdout


async def test_unprivileged_without_capabilities(jailed: LocalSandbox) -> None:
    r = await jailed.execute("id -u; grep CapEff /proc/self/status; hostname")
    uid, caps, host = r.stdout.split("\n")[:3]
    assert uid != "0"
    assert caps.split()[1] == "0000000000000000"
    assert host == "sandbox"
    r = await jailed.execute("touch /usr/x 2>&1; echo $?")
    assert r.stdout.strip().endswith("1")  # system folders are read-only


async def test_private_tmp_and_writable_thread_folders(jailed: LocalSandbox) -> None:
    marker = f"pronghorn-{uuid.uuid4().hex}"
    r = await jailed.execute(
        f"echo t > /tmp/{marker} && echo u > /mnt/user-data/uploads/u.txt && "
        "echo o > /mnt/user-data/outputs/o.txt && ls /tmp"
    )
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() == marker
    assert not await asyncio.to_thread(os.path.exists, f"/tmp/{marker}")
    assert (jailed.thread_paths.uploads / "u.txt").read_text() == "u\n"
    assert (jailed.thread_paths.outputs / "o.txt").read_text() == "o\n"


async def _tcp_server() -> tuple[asyncio.Server, int, list[bytes]]:
    got: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got.append(await reader.read(100))
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], got


async def test_network_refused_by_default(jailed: LocalSandbox) -> None:
    server, port, got = await _tcp_server()
    async with server:
        r = await jailed.execute(f"echo hello > /dev/tcp/127.0.0.1/{port} && echo CONNECTED")
        assert "CONNECTED" not in r.stdout
        assert r.exit_code != 0
        r = await jailed.execute("cat /proc/net/dev | tail -n +3 | cut -d: -f1")
        assert r.stdout.split() == ["lo"]  # only a private loopback
    assert got == []


async def test_network_allowed_when_configured(make_provider: MakeProvider, thread_id: str) -> None:
    provider = make_provider(isolation="bwrap", network=True)
    sb = await provider.acquire("alice", thread_id)
    assert provider.isolation_in_effect == "bwrap"
    server, port, got = await _tcp_server()
    async with server:
        r = await sb.execute(f"echo hello > /dev/tcp/127.0.0.1/{port} && echo CONNECTED")
        assert r.stdout == "CONNECTED\n", r.stderr
        for _ in range(50):
            if got:
                break
            await asyncio.sleep(0.02)
    assert got == [b"hello\n"]
