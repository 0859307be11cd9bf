"""cluster: claimable time, fencing token and lease of a run (work distribution)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("claimable_at", TS, nullable=True))
        batch.add_column(sa.Column("fence", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("lease_expires_at", TS, nullable=True))
    op.create_index("ix_runs_status_created", "runs", ["status", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_runs_status_created", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("lease_expires_at")
        batch.drop_column("fence")
        batch.drop_column("claimable_at")
