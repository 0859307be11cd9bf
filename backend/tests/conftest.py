"""Fixtures shared by all backend tests.

``backend/tests`` is on ``sys.path`` (pytest's rootdir-relative import of this conftest),
so helpers under ``tests/fakes`` import as ``from fakes.openai_server import ...``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakes.openai_server import FakeOpenAIServer
from support import forkserver


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A real OpenAI-compatible HTTP server on a free 127.0.0.1 port (see fakes/openai_server)."""
    with FakeOpenAIServer() as server:
        yield server


def pytest_unconfigure(config: pytest.Config) -> None:
    """The fork server of `pronghorn` subprocesses (support/forkserver.py) ends with pytest."""
    forkserver.OWNER.close()


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A parameter spelled with "::" (an IPv6 address) gets ":_:" in its test id instead.

    `--dist loadscope` groups tests by their node id up to its last "::": such an id would
    make its test a group of its own, which may start the module's shared server again on
    another worker (seconds per live server)."""
    if isinstance(val, str) and "::" in val:
        return val.replace("::", ":_:")
    return None


# --- live gateway servers -------------------------------------------------------------------
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from support.inproc import InProcessServer  # noqa: E402
from support.live import LiveServer, base_config  # noqa: E402


@pytest.fixture
def start_app(tmp_path: Path) -> Iterator[Callable[..., InProcessServer]]:
    """Factory: `start_app(**config_overrides)` runs the gateway app in this process (its own
    loop thread, real lifespan, streaming clients: `.sdk()`, `.http()`, `.ahttp()`)."""
    apps: list[InProcessServer] = []

    def _start(env: dict[str, str] | None = None, **overrides: Any) -> InProcessServer:
        app = InProcessServer(tmp_path / f"app{len(apps)}", base_config(**overrides), env or {})
        apps.append(app)
        return app.start()

    yield _start
    for app in apps:
        app.stop()


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Factory: `start_server(**config_overrides)` starts `pronghorn serve` on a free port.

    For what needs a process (signals, kill -9, the CLI, a browser or another program on a
    port); everything else uses `start_app`."""
    servers: list[LiveServer] = []

    def _start(env: dict[str, str] | None = None, **overrides: Any) -> LiveServer:
        server = LiveServer(tmp_path / f"srv{len(servers)}", base_config(**overrides), env or {})
        servers.append(server)
        return server.start()

    yield _start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    """One in-process gateway shared by the whole session (default test config)."""
    app = InProcessServer(tmp_path_factory.mktemp("app"), base_config()).start()
    yield app
    app.stop()


# --- SDK clients over real HTTP ---------------------------------------------------------------
from collections.abc import AsyncIterator  # noqa: E402

from langgraph_sdk import get_client  # noqa: E402
from langgraph_sdk.client import LangGraphClient  # noqa: E402

from support.sdk import SdkFactory  # noqa: E402


@pytest.fixture
async def sdk_client() -> AsyncIterator[SdkFactory]:
    """Factory: `sdk_client(url=..., api_key=..., headers=...)` is the official SDK's
    `get_client(...)` against a live server; every client it made is closed after the test
    (on the test's own event loop, so no connection outlives it)."""
    clients: list[LangGraphClient] = []

    def _open(**kwargs: Any) -> LangGraphClient:
        client = get_client(**kwargs)
        clients.append(client)
        return client

    yield _open
    for client in clients:
        await client.aclose()
