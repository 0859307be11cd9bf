"""API keys: named, hashed (sha256 of the key), revocable, with an optional expiry."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection, RowMapping

from pronghorn.persistence.repos.common import as_utc, iso
from pronghorn.persistence.repos.users import User
from pronghorn.persistence.repos.users import from_row as user_from_row
from pronghorn.persistence.tables import api_keys, users


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: str
    user_id: str
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None

    def to_api(self) -> dict[str, object]:
        """The key as lists show it: never the secret (the table does not have it)."""
        return {
            "id": self.id,
            "name": self.name,
            "prefix": self.prefix,
            "created_at": iso(self.created_at),
            "last_used_at": iso(self.last_used_at),
            "expires_at": iso(self.expires_at),
            "revoked_at": iso(self.revoked_at),
        }


def from_row(row: RowMapping, prefix: str = "") -> ApiKey:
    created = as_utc(row[f"{prefix}created_at"])
    assert created is not None
    return ApiKey(
        id=row[f"{prefix}id"],
        user_id=row[f"{prefix}user_id"],
        name=row[f"{prefix}name"],
        prefix=row[f"{prefix}prefix"],
        created_at=created,
        last_used_at=as_utc(row[f"{prefix}last_used_at"]),
        expires_at=as_utc(row[f"{prefix}expires_at"]),
        revoked_at=as_utc(row[f"{prefix}revoked_at"]),
    )


def insert_key(
    conn: Connection,
    *,
    key_id: str,
    user_id: str,
    name: str,
    prefix: str,
    key_hash: str,
    created_at: datetime,
    expires_at: datetime | None,
) -> ApiKey:
    conn.execute(
        insert(api_keys).values(
            id=key_id,
            user_id=user_id,
            name=name,
            prefix=prefix,
            key_hash=key_hash,
            created_at=created_at,
            expires_at=expires_at,
        )
    )
    found = get(conn, key_id)
    assert found is not None
    return found


def get(conn: Connection, key_id: str) -> ApiKey | None:
    row = (conn.execute(select(api_keys).where(api_keys.c.id == key_id))).mappings().first()
    return from_row(row) if row else None


_KEY_COLUMNS = [c.label(f"k_{c.name}") for c in api_keys.c]


def by_hash_with_user(conn: Connection, key_hash: str) -> tuple[ApiKey, User] | None:
    query = (
        select(*_KEY_COLUMNS, users)
        .join(users, users.c.id == api_keys.c.user_id)
        .where(api_keys.c.key_hash == key_hash)
    )
    row = (conn.execute(query)).mappings().first()
    if row is None:
        return None
    return from_row(row, "k_"), user_from_row(row)


def list_for_user(conn: Connection, user_id: str) -> list[ApiKey]:
    query = (
        select(api_keys)
        .where(api_keys.c.user_id == user_id)
        .order_by(api_keys.c.created_at.desc(), api_keys.c.id)
    )
    return [from_row(row) for row in (conn.execute(query)).mappings()]


def mark_used(conn: Connection, key_id: str, at: datetime) -> None:
    conn.execute(update(api_keys).where(api_keys.c.id == key_id).values(last_used_at=at))


def revoke(conn: Connection, key_id: str, at: datetime) -> bool:
    result = conn.execute(
        update(api_keys)
        .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
        .values(revoked_at=at)
    )
    return result.rowcount == 1
