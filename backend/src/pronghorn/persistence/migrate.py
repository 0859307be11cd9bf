"""Schema management: Alembic for the app's tables, the libraries' own setup() for LangGraph's
checkpoint and store tables."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def current_revision(db: Database) -> str | None:
    async with db.read() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())


async def upgrade(db: Database) -> None:
    """Bring the app tables to the newest revision (idempotent)."""

    def _run(sync_conn: Connection) -> None:
        command.upgrade(alembic_config(sync_conn), "head")

    async def _once() -> None:
        async with db.tx() as conn:
            await conn.run_sync(_run)

    await db.retry(_once)
