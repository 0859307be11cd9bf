"""Users: rows of the `users` table as typed records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, cast

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection, RowMapping

from pronghorn.persistence.repos.common import as_utc, iso, new_id, now
from pronghorn.persistence.tables import users

Role = Literal["admin", "user"]


@dataclass(frozen=True, slots=True)
class User:
    id: str
    username: str
    display_name: str
    role: Role
    email: str | None
    disabled: bool
    password_hash: str | None
    external_issuer: str | None
    external_subject: str | None
    password_changed_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def to_api(self) -> dict[str, object]:
        """The user as the HTTP API shows it (never the password hash)."""
        return {
            "id": self.id,
            "username": self.username,
            "email": self.email,
            "display_name": self.display_name,
            "role": self.role,
            "disabled": self.disabled,
            "created_at": iso(self.created_at),
        }


def username_key(username: str) -> str:
    return username.strip().casefold()


def email_key(email: str | None) -> str | None:
    return email.strip().casefold() if email else None


def from_row(row: RowMapping) -> User:
    created = as_utc(row["created_at"])
    updated = as_utc(row["updated_at"])
    assert created is not None and updated is not None
    return User(
        id=row["id"],
        username=row["username"],
        display_name=row["display_name"],
        role=cast(Role, row["role"]),
        email=row["email"],
        disabled=bool(row["disabled"]),
        password_hash=row["password_hash"],
        external_issuer=row["external_issuer"],
        external_subject=row["external_subject"],
        password_changed_at=as_utc(row["password_changed_at"]),
        created_at=created,
        updated_at=updated,
    )


def insert_user(
    conn: Connection,
    *,
    username: str,
    display_name: str,
    role: Role,
    password_hash: str | None,
    external_issuer: str | None = None,
    external_subject: str | None = None,
    email: str | None = None,
) -> User:
    ts = now()
    user_id = new_id()
    conn.execute(
        insert(users).values(
            id=user_id,
            username=username,
            username_key=username_key(username),
            email=email,
            email_key=email_key(email),
            display_name=display_name,
            role=role,
            disabled=False,
            password_hash=password_hash,
            external_issuer=external_issuer,
            external_subject=external_subject,
            password_changed_at=None,
            created_at=ts,
            updated_at=ts,
        )
    )
    found = get(conn, user_id)
    assert found is not None
    return found


def get(conn: Connection, user_id: str) -> User | None:
    row = (conn.execute(select(users).where(users.c.id == user_id))).mappings().first()
    return from_row(row) if row else None


def by_username(conn: Connection, username: str) -> User | None:
    query = select(users).where(users.c.username_key == username_key(username))
    row = (conn.execute(query)).mappings().first()
    return from_row(row) if row else None


def by_email(conn: Connection, email: str) -> User | None:
    query = select(users).where(users.c.email_key == email_key(email))
    row = (conn.execute(query)).mappings().first()
    return from_row(row) if row else None


def by_login(conn: Connection, name: str) -> User | None:
    """The user whose username or email is `name` (case-insensitive); a username wins."""
    key = username_key(name)
    query = select(users).where(or_(users.c.username_key == key, users.c.email_key == key))
    found = [from_row(row) for row in (conn.execute(query)).mappings()]
    for user in found:
        if username_key(user.username) == key:
            return user
    return found[0] if found else None


def by_external(conn: Connection, issuer: str, subject: str) -> User | None:
    query = select(users).where(
        users.c.external_issuer == issuer, users.c.external_subject == subject
    )
    row = (conn.execute(query)).mappings().first()
    return from_row(row) if row else None


def list_all(conn: Connection) -> list[User]:
    rows = (conn.execute(select(users).order_by(users.c.created_at, users.c.id))).mappings()
    return [from_row(row) for row in rows]


def count(conn: Connection) -> int:
    return int((conn.execute(select(func.count()).select_from(users))).scalar_one())


def count_admins(conn: Connection) -> int:
    query = (
        select(func.count())
        .select_from(users)
        .where(users.c.role == "admin", users.c.disabled.is_(False))
    )
    return int((conn.execute(query)).scalar_one())


def delete_user(conn: Connection, user_id: str) -> bool:
    """Delete the account (its sessions and API keys go with it by foreign key)."""
    result = conn.execute(delete(users).where(users.c.id == user_id))
    return bool(result.rowcount)


def update_user(
    conn: Connection,
    user_id: str,
    *,
    display_name: str | None = None,
    role: Role | None = None,
    disabled: bool | None = None,
    password_hash: str | None = None,
    email: str | None = None,
) -> User | None:
    """Set the given fields (None: unchanged; an empty `email` removes it)."""
    values: dict[str, object] = {"updated_at": now()}
    if email is not None:
        values["email"] = email or None
        values["email_key"] = email_key(email)
    if display_name is not None:
        values["display_name"] = display_name
    if role is not None:
        values["role"] = role
    if disabled is not None:
        values["disabled"] = disabled
    if password_hash is not None:
        values["password_hash"] = password_hash
        values["password_changed_at"] = values["updated_at"]
    conn.execute(update(users).where(users.c.id == user_id).values(**values))
    return get(conn, user_id)
