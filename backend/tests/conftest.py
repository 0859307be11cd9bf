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
