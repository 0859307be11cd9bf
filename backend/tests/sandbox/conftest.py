"""Shared fixtures: a data dir, thread ids, and providers for both isolation modes — and
the conformance fixtures: the same tests run on the local provider (isolation none and
bwrap) and on the container provider (a real Docker engine, see
``tests/support/docker_engine.py``; skipped with one message where none can run)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox import LocalSandboxProvider, Sandbox
from pronghorn.sandbox import bwrap as bw
from pronghorn.sandbox.container import ContainerSandboxProvider
from support.docker_engine import engine_or_reason


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
        config = AppConfig.model_validate({"data_dir": str(data_dir), "sandbox": sandbox})
        return LocalSandboxProvider(config)

    return make


@pytest.fixture(
    params=[pytest.param("none", id="local"), pytest.param("container", id="container")]
)
async def host_sandbox(
    request: pytest.FixtureRequest, data_dir: Path, thread_id: str
) -> AsyncIterator[Sandbox]:
    """The file tools' conformance fixture: a local sandbox with isolation=none (file tools
    behave the same in both local modes) and a container sandbox."""
    async with open_sandbox(request.param, data_dir, thread_id, command_timeout_s=10) as sb:
        yield sb


def container_config(
    data_dir: Path, container: dict[str, object] | None = None, **sandbox: object
) -> AppConfig:
    """Config of a container provider on the test engine (skips the test when none runs);
    each call gets an instance label of its own, so tests never adopt each other's
    containers."""
    engine, reason = engine_or_reason()
    if engine is None:
        pytest.skip(reason)
    settings: dict[str, object] = {
        "image": engine.sandbox_image,
        "docker_url": engine.url,
        "instance": f"test-{uuid.uuid4().hex[:12]}",
        **(container or {}),
    }
    return AppConfig.model_validate(
        {
            "data_dir": str(data_dir),
            "sandbox": {**sandbox, "kind": "container", "container": settings},
        }
    )


@contextlib.asynccontextmanager
async def open_sandbox(
    kind: str,
    data_dir: Path,
    thread_id: str,
    container: dict[str, object] | None = None,
    **sandbox: object,
) -> AsyncIterator[Sandbox]:
    """A sandbox of ``kind``: ``none`` or ``bwrap`` (local) or ``container``."""
    provider: LocalSandboxProvider | ContainerSandboxProvider
    if kind == "container":
        provider = ContainerSandboxProvider(container_config(data_dir, container, **sandbox))
    else:
        provider = LocalSandboxProvider(
            AppConfig.model_validate(
                {"data_dir": str(data_dir), "sandbox": {**sandbox, "isolation": kind}}
            )
        )
    try:
        sb = await provider.acquire("alice", thread_id)
        if isinstance(provider, LocalSandboxProvider):
            assert provider.isolation_in_effect == kind
        yield sb
        await provider.release(sb)
    finally:
        await provider.close()


# The conformance suite's providers: every test taking ``sandbox_kind`` runs on each.
SANDBOX_KINDS = [
    pytest.param("none", id="local-none"),
    pytest.param("bwrap", id="local-bwrap", marks=needs_bwrap),
    pytest.param("container", id="container"),
]
