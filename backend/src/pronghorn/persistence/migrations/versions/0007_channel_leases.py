"""channels: one receiver per channel across replicas (a row lease)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "channel_leases",
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("channel"),
    )


def downgrade() -> None:
    op.drop_table("channel_leases")
