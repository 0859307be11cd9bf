"""Helpers for the LangGraph API tests (the in-process gateway via the official SDK).

The package shares one in-process gateway on SQLite. With ``PRONGHORN_TEST_API_POSTGRES=1`` and
``PRONGHORN_TEST_POSTGRES_URL`` set, it runs on a fresh PostgreSQL database instead
(created for the session, dropped afterwards).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph_sdk.client import LangGraphClient
from psycopg import sql
from sqlalchemy.engine import make_url

from support.inproc import InProcessServer
from support.live import LiveServer, base_config

ECHO_ASSISTANT_ID = "046b5dc7-2108-582c-9c6c-31d556d138f0"


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextlib.contextmanager
def api_database() -> Iterator[dict[str, Any]]:
    """Config overrides for the package's database: SQLite, or a fresh PostgreSQL database
    (dropped afterwards) when ``PRONGHORN_TEST_API_POSTGRES=1``."""
    pg_base = os.environ.get("PRONGHORN_TEST_POSTGRES_URL")
    if not (pg_base and os.environ.get("PRONGHORN_TEST_API_POSTGRES") == "1"):
        yield {}
        return
    pg_name = f"pronghorn_api_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_libpq(pg_base), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(pg_name)))
    url = make_url(pg_base).set(database=pg_name).render_as_string(hide_password=False)
    try:
        yield {"database": {"url": url}}
    finally:
        with psycopg.connect(_libpq(pg_base), autocommit=True) as conn:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(drop.format(sql.Identifier(pg_name)))


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    """One gateway for the whole API package (its tests were written for a shared server)."""
    with api_database() as overrides:
        srv = InProcessServer(tmp_path_factory.mktemp("api"), base_config(**overrides)).start()
        try:
            yield srv
        finally:
            srv.stop()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A real `pronghorn serve` process, for clients that are other programs (the JS SDK),
    with auth on (`auth.mode: local`, the default): `api_key(server)` makes a key."""
    with api_database() as overrides:
        config = base_config(auth={"mode": "local"}, **overrides)
        srv = LiveServer(tmp_path_factory.mktemp("api-live"), config).start()
        try:
            yield srv
        finally:
            srv.stop()


def cli(server: LiveServer, *args: str, stdin: str | None = None) -> str:
    """`pronghorn ARGS` on the live server's database; its stdout (it must succeed)."""
    done = server.cli(*args, stdin=stdin)
    assert done.returncode == 0, done.stderr
    return done.stdout


def api_key(server: LiveServer, username: str = "js") -> str:
    """A new user of the live server and an API key of theirs, made with the CLI (the key is
    alone on the last stdout line)."""
    cli(server, "users", "create", username, "--password-stdin", stdin="js-password-123\n")
    return cli(server, "keys", "create", username, "--name", "js sdk").strip().splitlines()[-1]


def set_thread_status(server: InProcessServer, thread_id: str, status: str) -> None:
    """Write a thread's status straight into the server's database (stands in for a run)."""
    url = (server.config.get("database") or {}).get("url")
    if url:
        with psycopg.connect(_libpq(url), autocommit=True) as conn:
            conn.execute("UPDATE threads SET status = %s WHERE thread_id = %s", (status, thread_id))
        return
    with sqlite3.connect(server.workdir / "data" / "pronghorn.db", timeout=10) as conn:
        conn.execute("UPDATE threads SET status = ? WHERE thread_id = ?", (status, thread_id))


@pytest.fixture
def client(server: InProcessServer) -> LangGraphClient:
    return server.sdk()
