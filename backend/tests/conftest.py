"""Fixtures shared by all backend tests.

``backend/tests`` is on ``sys.path`` (pytest's rootdir-relative import of this conftest),
so helpers under ``tests/fakes`` import as ``from fakes.openai_server import ...``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A real OpenAI-compatible HTTP server on a free 127.0.0.1 port (see fakes/openai_server)."""
    with FakeOpenAIServer() as server:
        yield server


# --- live gateway servers -------------------------------------------------------------------
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from support.live import LiveServer, base_config  # noqa: E402


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Factory: `start_server(**config_overrides)` starts `pronghorn serve` on a free port."""
    servers: list[LiveServer] = []

    def _start(env: dict[str, str] | None = None, **overrides: Any) -> LiveServer:
        server = LiveServer(tmp_path / f"srv{len(servers)}", base_config(**overrides), env or {})
        servers.append(server)
        return server.start()

    yield _start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One live server shared by the whole session (default test config)."""
    srv = LiveServer(tmp_path_factory.mktemp("live"), base_config()).start()
    yield srv
    srv.stop()
