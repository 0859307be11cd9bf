"""A user's page of threads is read in index order, not by sorting all their threads.

`threads.search_rows` is scoped to one owner (the local user owns everything with auth off) and
sorted by `created_at` or `updated_at`. The test runs the repository's own page query on
SQLite and asks SQLite for its plan: a full "USE TEMP B-TREE FOR ORDER BY" is a sort of every
row of the owner (what made a page of 10 take ~200 ms at 100,000 threads); only the
tie-breaker (`thread_id`) may be sorted, within rows of equal time."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import threads
from pronghorn.persistence.repos.common import OwnerScope

pytestmark = pytest.mark.parametrize("db", ["sqlite"], indirect=True)

FILL = """
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO threads (thread_id, status, metadata, config, "values", interrupts, created_at,
                     updated_at, state_updated_at, owner_id)
SELECT printf('00000000-0000-4000-8000-%012d', i), 'idle', '{}', '{}', '{}', '{}',
       printf('2026-12-01 00:%02d:%02d.000000', i / 60, i % 60),
       printf('2026-12-02 00:%02d:%02d.000000', (500 - i) / 60, (500 - i) % 60),
       '2026-12-01 00:00:00.000000', CASE WHEN i % 2 = 0 THEN 'alice' ELSE 'bob' END
FROM n
"""


@pytest.mark.parametrize("sort_by", ["created_at", "updated_at"])
async def test_a_users_page_is_read_in_index_order(db: Database, sort_by: str) -> None:

    def step1(conn: Connection):
        conn.execute(text(FILL))
        conn.execute(text("ANALYZE"))

    await db.write(step1)
    pages: list[tuple[str, Any]] = []

    def keep(
        _conn: Connection, _cursor: Any, statement: str, parameters: Any, *_: object
    ) -> None:  # the page query, not the count
        if "count(" not in statement and "LIMIT" in statement:
            pages.append((statement, parameters))

    def step2(conn: Connection):
        event.listen(conn, "before_cursor_execute", keep)
        rows, total = threads.search_rows(
            conn, limit=10, sort_by=sort_by, scope=OwnerScope(owner_id="alice")
        )
        event.remove(conn, "before_cursor_execute", keep)
        assert total == 250
        assert len(rows) == 10
        assert {r.owner_id for r in rows} == {"alice"}
        times = [getattr(r, sort_by) for r in rows]
        assert times == sorted(times, reverse=True)
        assert len(pages) == 1
        statement, parameters = pages[0]
        plan = (conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)).all()
        return plan

    plan = await db.read(step2)
    steps = [str(step[-1]) for step in plan]  # (id, parent, notused, detail)
    assert any(f"ix_threads_owner_{sort_by[:7]}" in s for s in steps), steps
    assert "USE TEMP B-TREE FOR ORDER BY" not in steps, steps


async def test_a_users_threads_of_one_status_are_counted_from_an_index(db: Database) -> None:

    def step1(conn: Connection):
        conn.execute(text(FILL))
        conn.execute(text("ANALYZE"))

    await db.write(step1)
    counts: list[tuple[str, Any]] = []

    def keep(_conn: Connection, _cursor: Any, statement: str, parameters: Any, *_: object) -> None:
        if "count(" in statement:
            counts.append((statement, parameters))

    def step2(conn: Connection):
        event.listen(conn, "before_cursor_execute", keep)
        _, total = threads.search_rows(
            conn, limit=10, status="idle", scope=OwnerScope(owner_id="alice")
        )
        event.remove(conn, "before_cursor_execute", keep)
        assert total == 250
        statement, parameters = counts[0]
        plan = (conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)).all()
        return plan

    plan = await db.read(step2)
    steps = [str(step[-1]) for step in plan]
    assert any("COVERING INDEX ix_threads_owner_status" in s for s in steps), steps
