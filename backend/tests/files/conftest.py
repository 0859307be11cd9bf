"""A live server with small upload limits, and helpers for the files API tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.inproc import InProcessServer
from support.live import base_config

MAX_FILE = 4096
MAX_TOTAL = 10_000
SCRIPT = [
    {"text": "hi", "usage": {"input_tokens": 100, "output_tokens": 7, "total_tokens": 107}},
    {"text": "again", "usage": {"input_tokens": 150, "output_tokens": 3, "total_tokens": 153}},
]


@pytest.fixture(scope="package")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    """One live server for the files tests: small upload limits, a scripted model that
    reports usage, and the one-call ``usage_model`` test graph."""
    config = base_config(
        uploads={
            "max_file_bytes": MAX_FILE,
            "max_total_bytes": MAX_TOTAL,
            "convert": {"enabled": False},  # documents: test_convert_uploads.py
        },
        models=[{"name": "s", "provider": "scripted", "script": SCRIPT}],
        agent={"default_model": "s"},
        graphs={"usage_model": "testgraphs.usage_model:make_graph"},
    )
    server = InProcessServer(tmp_path_factory.mktemp("files"), config).start()
    yield server
    server.stop()


@pytest.fixture
def http(srv: InProcessServer) -> Iterator[httpx.Client]:
    with srv.http(base_url=srv.url, timeout=15) as client:
        yield client


def new_thread(http: httpx.Client) -> str:
    r = http.post("/api/langgraph/threads", json={})
    assert r.status_code == 200, r.text
    return r.json()["thread_id"]


def thread_dir(srv: InProcessServer, thread_id: str) -> Path:
    return srv.workdir / "data" / "users" / "local" / "threads" / thread_id
