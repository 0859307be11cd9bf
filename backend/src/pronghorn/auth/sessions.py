"""Login sessions behind the `pronghorn_session` cookie.

The cookie holds a random token; the table keeps only its sha256 (the session id), the
CSRF token the session's mutating requests must echo, and an expiry that slides while the
session is used (its row is written at most once a minute)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.engine import Connection

from pronghorn.auth.tokens import digest, new_token
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import sessions as repo
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.repos.users import User

COOKIE_NAME = "pronghorn_session"
# DeerFlow's web UI (and its Next server) look for the session under this name; it holds
# the same kind of session token (gateway/routers/deerflow_auth.py sets it).
DEERFLOW_COOKIE_NAME = "access_token"
DEFAULT_TTL = timedelta(days=14)
TOUCH_EVERY = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class ActiveSession:
    id: str
    user: User
    csrf_token: str
    expires_at: datetime


async def start(db: Database, user_id: str, *, ttl: timedelta = DEFAULT_TTL) -> tuple[str, str]:
    """A new session for the user: (the cookie value, its CSRF token)."""
    cookie_value, csrf_token = new_token(), new_token()
    ts = now()

    def unit(conn: Connection) -> None:
        repo.insert_session(
            conn,
            session_id=digest(cookie_value),
            user_id=user_id,
            csrf_token=csrf_token,
            created_at=ts,
            expires_at=ts + ttl,
        )
        repo.delete_expired(conn, ts)  # housekeeping, on the rare write path

    await db.write(unit)
    return cookie_value, csrf_token


async def resolve(
    db: Database, cookie_value: str, *, ttl: timedelta = DEFAULT_TTL
) -> ActiveSession | None:
    """The live session behind a cookie value: None when unknown, expired or its user is
    disabled."""
    if not cookie_value or len(cookie_value) > 256:
        return None
    session_id = digest(cookie_value)
    found = await db.read(lambda conn: repo.with_user(conn, session_id))
    if found is None:
        return None
    session, user = found
    ts = now()
    if session.expires_at <= ts or user.disabled:
        return None
    expires = session.expires_at
    if ts - session.last_seen_at >= TOUCH_EVERY:
        expires = ts + ttl
        await db.write(lambda conn: repo.touch(conn, session_id, seen=ts, expires=expires))
    return ActiveSession(session_id, user, session.csrf_token, expires)


async def end(db: Database, cookie_value: str) -> bool:
    return await db.write(lambda conn: repo.delete_session(conn, digest(cookie_value)))
