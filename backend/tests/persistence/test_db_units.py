"""`Database.write` and `Database.read` on PostgreSQL, each one hop into SQLAlchemy's sync
world: a write commits what its unit did if it returns and nothing if it raises; a read
keeps nothing its unit did."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos.threads import insert_thread
from pronghorn.persistence.tables import threads

pytestmark = pytest.mark.parametrize("db", ["postgres"], indirect=True)


class Boom(Exception):
    pass


def _status(conn: Connection, tid: str) -> str:
    return conn.execute(select(threads.c.status).where(threads.c.thread_id == tid)).scalar_one()


def _set(conn: Connection, tid: str, status: str) -> None:
    conn.execute(update(threads).where(threads.c.thread_id == tid).values(status=status))


async def test_a_write_commits_or_rolls_back_and_a_read_keeps_nothing(db: Database) -> None:
    tid = str(uuid.uuid4())
    await db.write(lambda c: insert_thread(c, tid, metadata={}))
    await db.write(lambda c: _set(c, tid, "busy"))
    assert await db.read(lambda c: _status(c, tid)) == "busy"

    def fails(conn: Connection) -> None:
        _set(conn, tid, "error")
        raise Boom

    with pytest.raises(Boom):
        await db.write(fails)
    assert await db.read(lambda c: _status(c, tid)) == "busy"

    def writes_then_reads(conn: Connection) -> str:
        _set(conn, tid, "interrupted")
        return _status(conn, tid)

    assert await db.read(writes_then_reads) == "interrupted"  # seen inside the unit only
    assert await db.read(lambda c: _status(c, tid)) == "busy"
    with pytest.raises(Boom):
        await db.read(fails)
    assert await db.read(lambda c: _status(c, tid)) == "busy"
