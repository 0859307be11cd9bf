"""API keys: `phk_` + 32 random bytes (url-safe), shown once, stored as a sha256."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from sqlalchemy.engine import Connection

from pronghorn.auth.errors import AccountError
from pronghorn.auth.tokens import API_KEY_PREFIX, digest, new_api_key, shown_prefix
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import api_keys as repo
from pronghorn.persistence.repos.api_keys import ApiKey
from pronghorn.persistence.repos.common import new_id, now
from pronghorn.persistence.repos.users import User

__all__ = ["ApiKey", "KeyCheck", "create", "list_keys", "resolve", "revoke"]

MARK_USED_EVERY = timedelta(minutes=1)
MAX_EXPIRY_DAYS = 3650

Refusal = Literal["unknown", "revoked", "expired", "disabled"]


@dataclass(frozen=True, slots=True)
class KeyCheck:
    """What a presented key is: its row and user when valid, else why it is refused."""

    key: ApiKey | None
    user: User | None
    refusal: Refusal | None


def check_name(name: str) -> str:
    label = name.strip()
    if not label or len(label) > 100:
        raise AccountError("name: 1-100 characters", 422)
    return label


async def create(
    db: Database, user_id: str, *, name: str, expires_in_days: float | None = None
) -> tuple[ApiKey, str]:
    """A new key for the user: (its record, the key itself — shown this once)."""
    label = check_name(name)
    if expires_in_days is not None and not 0 < expires_in_days <= MAX_EXPIRY_DAYS:
        raise AccountError(f"expires_in_days: between 0 and {MAX_EXPIRY_DAYS}", 422)
    secret = new_api_key()
    ts = now()
    expires = ts + timedelta(days=expires_in_days) if expires_in_days is not None else None
    record = await db.write(
        lambda conn: repo.insert_key(
            conn,
            key_id=new_id(),
            user_id=user_id,
            name=label,
            prefix=shown_prefix(secret),
            key_hash=digest(secret),
            created_at=ts,
            expires_at=expires,
        )
    )
    return record, secret


async def list_keys(db: Database, user_id: str) -> list[ApiKey]:
    return await db.read(lambda conn: repo.list_for_user(conn, user_id))


async def get(db: Database, key_id: str) -> ApiKey | None:
    return await db.read(lambda conn: repo.get(conn, key_id))


async def revoke(db: Database, key_id: str, *, user_id: str | None = None) -> ApiKey:
    """Revoke a key (idempotent); with `user_id`, only that user's key (404 otherwise)."""

    def unit(conn: Connection) -> ApiKey | None:
        record = repo.get(conn, key_id)
        if record is None or (user_id is not None and record.user_id != user_id):
            raise AccountError(f"API key with ID {key_id} not found", 404)
        repo.revoke(conn, key_id, now())
        return repo.get(conn, key_id)

    revoked = await db.write(unit)
    assert revoked is not None
    return revoked


async def resolve(db: Database, secret: str) -> KeyCheck:
    if not secret.startswith(API_KEY_PREFIX) or len(secret) > 200:
        return KeyCheck(None, None, "unknown")
    found = await db.read(lambda conn: repo.by_hash_with_user(conn, digest(secret)))
    if found is None:
        return KeyCheck(None, None, "unknown")
    record, user = found
    ts = now()
    if record.revoked_at is not None:
        return KeyCheck(record, user, "revoked")
    if record.expires_at is not None and record.expires_at <= ts:
        return KeyCheck(record, user, "expired")
    if user.disabled:
        return KeyCheck(record, user, "disabled")
    if record.last_used_at is None or ts - record.last_used_at >= MARK_USED_EVERY:
        await db.write(lambda conn: repo.mark_used(conn, record.id, ts))
    return KeyCheck(record, user, None)
