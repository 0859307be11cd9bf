"""Alembic environment: runs on a connection handed over by pronghorn.persistence.migrate."""

from __future__ import annotations

from alembic import context

from pronghorn.persistence.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached by a bare `alembic` call
    raise SystemExit("Run migrations with `pronghorn migrate`, not the alembic CLI.")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
