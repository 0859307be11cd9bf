"""Schema management: Alembic for the app's tables, the libraries' own setup() for LangGraph's
checkpoint and store tables.

Alembic is imported by the function that needs it, so a CLI command that never touches the
schema (`pronghorn --help`) does not load it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# PostgreSQL advisory lock key serialising schema changes: replicas starting together on a
# fresh database would otherwise create the same tables at once (a unique violation in
# pg_type). Held by the Alembic upgrade (transaction lock), by the checkpoint and store
# setup (session lock, runtime/checkpoints/checkpoint.py) and while the system assistants are
# written
# (repos/assistants.py).
SCHEMA_LOCK_KEY = 0x70726E6D  # "prnm"


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def current_revision(db: Database) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return await db.read(lambda c: MigrationContext.configure(c).get_current_revision())


async def upgrade(db: Database) -> None:
    """Bring the app tables to the newest revision (idempotent)."""

    from alembic import command

    def _run(sync_conn: Connection) -> None:
        if not db.is_sqlite:  # a migration may take its time: no per-statement bound
            sync_conn.exec_driver_sql("SET LOCAL statement_timeout = 0")
            # One process migrates at a time; the others then find the schema at head.
            sync_conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK_KEY})")
        command.upgrade(alembic_config(sync_conn), "head")

    async def _once() -> None:
        await db.write(_run)

    await db.retry(_once)
