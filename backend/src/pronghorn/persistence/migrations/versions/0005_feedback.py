"""feedback and model usage: run feedback (thumbs + comment) and the per-call usage ledger

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 13:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "model_usage",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("at", _TS, nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("thread_id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=255), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
    )
    op.create_index("ix_model_usage_thread_id", "model_usage", ["thread_id"])
    op.create_index("ix_model_usage_run_id", "model_usage", ["run_id"])
    op.create_index("ix_model_usage_owner_at", "model_usage", ["owner_id", "at"])
    op.create_table(
        "run_feedback",
        sa.Column("feedback_id", sa.String(length=64), primary_key=True),
        sa.Column(
            "run_id",
            sa.String(length=64),
            sa.ForeignKey("runs.run_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("thread_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("message_id", sa.String(length=255), nullable=True),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.UniqueConstraint("run_id", "user_id", name="uq_run_feedback_run_user"),
    )
    op.create_index("ix_run_feedback_thread_id", "run_feedback", ["thread_id"])


def downgrade() -> None:
    op.drop_index("ix_run_feedback_thread_id", table_name="run_feedback")
    op.drop_table("run_feedback")
    op.drop_index("ix_model_usage_owner_at", table_name="model_usage")
    op.drop_index("ix_model_usage_run_id", table_name="model_usage")
    op.drop_index("ix_model_usage_thread_id", table_name="model_usage")
    op.drop_table("model_usage")
