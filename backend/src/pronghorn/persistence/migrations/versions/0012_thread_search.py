"""thread search: a full-text index of each thread's title and message text (SQLite FTS5,
PostgreSQL tsvector + GIN), refreshed from the threads table when a search runs

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 21:45:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE = [
    """CREATE TABLE thread_search (
        rowid INTEGER PRIMARY KEY,
        thread_id VARCHAR(64) NOT NULL UNIQUE,
        owner_id VARCHAR(255),
        stamp VARCHAR(80) NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL
    )""",
    "CREATE INDEX ix_thread_search_owner_id ON thread_search (owner_id)",
    """CREATE VIRTUAL TABLE thread_search_fts USING fts5(
        title, body, content='thread_search', content_rowid='rowid',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER thread_search_ai AFTER INSERT ON thread_search BEGIN
        INSERT INTO thread_search_fts(rowid, title, body)
        VALUES (new.rowid, new.title, new.body);
    END""",
    """CREATE TRIGGER thread_search_ad AFTER DELETE ON thread_search BEGIN
        INSERT INTO thread_search_fts(thread_search_fts, rowid, title, body)
        VALUES ('delete', old.rowid, old.title, old.body);
    END""",
    """CREATE TRIGGER thread_search_au AFTER UPDATE ON thread_search BEGIN
        INSERT INTO thread_search_fts(thread_search_fts, rowid, title, body)
        VALUES ('delete', old.rowid, old.title, old.body);
        INSERT INTO thread_search_fts(rowid, title, body)
        VALUES (new.rowid, new.title, new.body);
    END""",
]

POSTGRES = [
    """CREATE TABLE thread_search (
        thread_id VARCHAR(64) PRIMARY KEY,
        owner_id VARCHAR(255),
        stamp VARCHAR(80) NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        doc tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('simple', title), 'A')
            || setweight(to_tsvector('simple', body), 'B')
        ) STORED
    )""",
    "CREATE INDEX ix_thread_search_owner_id ON thread_search (owner_id)",
    "CREATE INDEX ix_thread_search_doc ON thread_search USING GIN (doc)",
]


def upgrade() -> None:
    statements = POSTGRES if op.get_bind().dialect.name == "postgresql" else SQLITE
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        for trigger in ("thread_search_ai", "thread_search_ad", "thread_search_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS thread_search_fts")
    op.execute("DROP TABLE IF EXISTS thread_search")
