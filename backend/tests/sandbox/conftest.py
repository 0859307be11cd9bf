"""Shared fixtures: a data dir, thread ids, and providers for both isolation modes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from pronghorn.config.schema import AppConfig
from pronghorn.sandbox import LocalSandbox, LocalSandboxProvider
from pronghorn.sandbox import bwrap as bw


def _bwrap_status() -> tuple[bool, str]:
    path = bw.find_bwrap()
    if path is None:
        return False, "bwrap is not installed (apt-get install -y bubblewrap)"
    ok, reason = asyncio.run(bw.probe(path, network=False))
    return ok, reason


BWRAP_OK, BWRAP_REASON = _bwrap_status()
needs_bwrap = pytest.mark.skipif(
    not BWRAP_OK, reason=f"bwrap cannot run on this machine: {BWRAP_REASON}"
)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def thread_id() -> str:
    return str(uuid.uuid4())


MakeProvider = Callable[..., LocalSandboxProvider]


@pytest.fixture
def make_provider(data_dir: Path) -> MakeProvider:
    def make(**sandbox: object) -> LocalSandboxProvider:
        return LocalSandboxProvider(AppConfig(data_dir=str(data_dir), sandbox=sandbox))

    return make


@pytest.fixture
async def host_sandbox(make_provider: MakeProvider, thread_id: str) -> AsyncIterator[LocalSandbox]:
    """A sandbox with isolation=none (file tools behave the same in both modes)."""
    provider = make_provider(isolation="none", command_timeout_s=10)
    sandbox = await provider.acquire("alice", thread_id)
    assert isinstance(sandbox, LocalSandbox)
    yield sandbox
    await provider.release(sandbox)
    await provider.close()
