"""user emails (log in with a username or an email) and the files each run changed

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06 21:15:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("email", sa.String(length=255), nullable=True))
        batch.add_column(sa.Column("email_key", sa.String(length=255), nullable=True))
        batch.create_unique_constraint("uq_users_email_key", ["email_key"])
    op.create_table(
        "workspace_changes",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("thread_id", sa.String(length=64), nullable=False),
        sa.Column("changes", JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(["thread_id"], ["threads.thread_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id"),
    )
    op.create_index(
        "ix_workspace_changes_thread_id", "workspace_changes", ["thread_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_workspace_changes_thread_id", table_name="workspace_changes")
    op.drop_table("workspace_changes")
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint("uq_users_email_key", type_="unique")
        batch.drop_column("email_key")
        batch.drop_column("email")
