"""channels: chat → thread map, delivery dedupe, identity bindings, connect codes

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "channel_threads",
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("chat_key", sa.String(length=255), nullable=False),
        sa.Column("thread_id", sa.String(length=64), nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=True),
        sa.Column("model_name", sa.String(length=255), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("channel", "chat_key"),
    )
    op.create_table(
        "channel_dedupe",
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("event_key", sa.String(length=255), nullable=False),
        sa.Column("seen_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("channel", "event_key"),
    )
    op.create_index(op.f("ix_channel_dedupe_seen_at"), "channel_dedupe", ["seen_at"], unique=False)
    op.create_table(
        "channel_bindings",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=False),
        sa.Column("external_name", sa.String(length=255), nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("principal", JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("channel", "external_id", name="uq_channel_bindings_identity"),
    )
    op.create_index(
        op.f("ix_channel_bindings_owner_id"), "channel_bindings", ["owner_id"], unique=False
    )
    op.create_table(
        "channel_codes",
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("principal", JSON, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("code_hash"),
    )
    op.create_index(
        op.f("ix_channel_codes_expires_at"), "channel_codes", ["expires_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_channel_codes_expires_at"), table_name="channel_codes")
    op.drop_table("channel_codes")
    op.drop_index(op.f("ix_channel_bindings_owner_id"), table_name="channel_bindings")
    op.drop_table("channel_bindings")
    op.drop_table("channel_threads")
    op.drop_index(op.f("ix_channel_dedupe_seen_at"), table_name="channel_dedupe")
    op.drop_table("channel_dedupe")
