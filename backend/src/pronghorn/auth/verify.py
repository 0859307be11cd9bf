"""Check a known user's password (e.g. the current one before a change)."""

from __future__ import annotations

from pronghorn.auth.passwords import verify_password
from pronghorn.persistence.repos.users import User


async def verify_password_of(user: User, password: str) -> bool:
    return await verify_password(user.password_hash, password)
