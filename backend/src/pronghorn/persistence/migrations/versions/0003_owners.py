"""owners: who each thread, run, cron and user-created assistant belongs to

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 10:00:00

Existing threads, runs and crons, and assistants that are not system assistants, were all
made by the one local user of `auth.mode: none`: they get owner "local". System assistants
(metadata.created_by = system) keep NULL: shared by everyone.
"""

import json
from collections.abc import Sequence
from typing import cast

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LEGACY_OWNER = "local"
_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    for table in ("threads", "runs", "crons"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("owner_id", sa.String(length=255), nullable=True))
            batch_op.create_index(batch_op.f(f"ix_{table}_owner_id"), ["owner_id"], unique=False)
        op.execute(sa.text(f"UPDATE {table} SET owner_id = :owner").bindparams(owner=LEGACY_OWNER))
    # The principal a run (and a cron's runs) executes as, kept for runs resumed after a
    # restart: identity, display name, role, permissions and custom fields.
    for table in ("runs", "crons"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("principal", _JSON, nullable=True))
    with op.batch_alter_table("assistants", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner_id", sa.String(length=255), nullable=True))
        batch_op.create_index(batch_op.f("ix_assistants_owner_id"), ["owner_id"], unique=False)
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT assistant_id, metadata FROM assistants")).all()
    for assistant_id, metadata in rows:
        meta = cast(
            dict[str, object],
            json.loads(metadata or "{}") if isinstance(metadata, str) else metadata or {},
        )
        if meta.get("created_by") != "system":
            bind.execute(
                sa.text("UPDATE assistants SET owner_id = :owner WHERE assistant_id = :id"),
                {"owner": LEGACY_OWNER, "id": assistant_id},
            )


def downgrade() -> None:
    with op.batch_alter_table("assistants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_assistants_owner_id"))
        batch_op.drop_column("owner_id")
    for table in ("runs", "crons"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("principal")
    for table in ("threads", "runs", "crons"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(batch_op.f(f"ix_{table}_owner_id"))
            batch_op.drop_column("owner_id")
