"""Login sessions: one row per session cookie, keyed by the sha256 of its token."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from pronghorn.persistence.repos.common import as_utc
from pronghorn.persistence.repos.users import User, from_row
from pronghorn.persistence.tables import sessions, users


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: str
    user_id: str
    csrf_token: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime


def insert_session(
    conn: Connection,
    *,
    session_id: str,
    user_id: str,
    csrf_token: str,
    created_at: datetime,
    expires_at: datetime,
) -> None:
    conn.execute(
        insert(sessions).values(
            id=session_id,
            user_id=user_id,
            csrf_token=csrf_token,
            created_at=created_at,
            last_seen_at=created_at,
            expires_at=expires_at,
        )
    )


def with_user(conn: Connection, session_id: str) -> tuple[SessionRow, User] | None:
    """The session and its user, in one query."""
    query = (
        select(
            sessions.c.id.label("s_id"),
            sessions.c.csrf_token.label("s_csrf"),
            sessions.c.created_at.label("s_created"),
            sessions.c.last_seen_at.label("s_seen"),
            sessions.c.expires_at.label("s_expires"),
            users,
        )
        .join(users, users.c.id == sessions.c.user_id)
        .where(sessions.c.id == session_id)
    )
    row = (conn.execute(query)).mappings().first()
    if row is None:
        return None
    created, seen, expires = (as_utc(row[k]) for k in ("s_created", "s_seen", "s_expires"))
    assert created is not None and seen is not None and expires is not None
    user = from_row(row)
    session = SessionRow(row["s_id"], user.id, row["s_csrf"], created, seen, expires)
    return session, user


def touch(conn: Connection, session_id: str, *, seen: datetime, expires: datetime) -> None:
    conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(last_seen_at=seen, expires_at=expires)
    )


def delete_session(conn: Connection, session_id: str) -> bool:
    result = conn.execute(delete(sessions).where(sessions.c.id == session_id))
    return result.rowcount == 1


def delete_for_user(conn: Connection, user_id: str) -> int:
    result = conn.execute(delete(sessions).where(sessions.c.user_id == user_id))
    return int(result.rowcount)


def delete_expired(conn: Connection, before: datetime) -> int:
    result = conn.execute(delete(sessions).where(sessions.c.expires_at < before))
    return int(result.rowcount)
