"""thread listing indexes: a user's threads newest first (created or updated), without
sorting all of them

`threads.search` is always scoped to one owner (the caller, or the local user with auth
off) and sorted by `created_at` (default) or `updated_at`: with only `owner_id` indexed, a
page of 10 sorted all of a user's threads first (~200 ms at 100,000). With these indexes it
reads the page in index order, and counts a user's threads of one status (the total the
API returns with a page) from an index alone.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07 00:50:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_threads_owner_created", "threads", ["owner_id", "created_at"])
    op.create_index("ix_threads_owner_updated", "threads", ["owner_id", "updated_at"])
    op.create_index("ix_threads_owner_status", "threads", ["owner_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_threads_owner_status", table_name="threads")
    op.drop_index("ix_threads_owner_updated", table_name="threads")
    op.drop_index("ix_threads_owner_created", table_name="threads")
