"""Helpers for the LangGraph API tests (live server via the official SDK).

The package shares one live server on SQLite. With ``PRONGHORN_TEST_API_POSTGRES=1`` and
``PRONGHORN_TEST_POSTGRES_URL`` set, the server runs on a fresh PostgreSQL database instead
(created for the session, dropped afterwards).
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from sqlalchemy.engine import make_url

from support.live import LiveServer, base_config

ECHO_ASSISTANT_ID = "046b5dc7-2108-582c-9c6c-31d556d138f0"


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One live server for the whole API package (a start costs seconds on a busy machine)."""
    overrides: dict = {}
    pg_base = os.environ.get("PRONGHORN_TEST_POSTGRES_URL")
    pg_name = None
    if pg_base and os.environ.get("PRONGHORN_TEST_API_POSTGRES") == "1":
        pg_name = f"pronghorn_api_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(_libpq(pg_base), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{pg_name}"')
        url = make_url(pg_base).set(database=pg_name).render_as_string(hide_password=False)
        overrides["database"] = {"url": url}
    srv = LiveServer(tmp_path_factory.mktemp("api"), base_config(**overrides)).start()
    try:
        yield srv
    finally:
        srv.stop()
        if pg_name:
            with psycopg.connect(_libpq(pg_base), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')


def set_thread_status(server: LiveServer, thread_id: str, status: str) -> None:
    """Write a thread's status straight into the server's database (stands in for a run)."""
    url = (server.config.get("database") or {}).get("url")
    if url:
        with psycopg.connect(_libpq(url), autocommit=True) as conn:
            conn.execute("UPDATE threads SET status = %s WHERE thread_id = %s", (status, thread_id))
        return
    with sqlite3.connect(server.workdir / "data" / "pronghorn.db", timeout=10) as conn:
        conn.execute("UPDATE threads SET status = ? WHERE thread_id = ?", (status, thread_id))


@pytest.fixture
async def client(server: LiveServer) -> AsyncIterator[LangGraphClient]:
    sdk = get_client(url=server.api, api_key=None)
    yield sdk
    await sdk.aclose()  # its connections close on the test's own event loop
