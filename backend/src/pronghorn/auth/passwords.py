"""Password hashing with argon2id (argon2-cffi), always off the event loop."""

from __future__ import annotations

import asyncio
import functools

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from pronghorn.auth.errors import AccountError

MIN_LENGTH = 8
MAX_LENGTH = 1024

_HASHER = PasswordHasher()  # argon2id with the library's current recommended parameters


def check_policy(password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise AccountError(f"password: at least {MIN_LENGTH} characters", 422)
    if len(password) > MAX_LENGTH:
        raise AccountError(f"password: at most {MAX_LENGTH} characters", 422)


async def hash_password(password: str) -> str:
    check_policy(password)
    return await asyncio.to_thread(_HASHER.hash, password)


@functools.lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _HASHER.hash("pronghorn-no-such-user")


def _verify(stored: str | None, password: str) -> bool:
    # An unknown user (or one without a password) still costs one verification, so the
    # answer time does not tell which usernames exist.
    target = stored if stored is not None else _dummy_hash()
    try:
        ok = _HASHER.verify(target, password[:MAX_LENGTH])
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
    return ok and stored is not None


async def verify_password(stored: str | None, password: str) -> bool:
    return await asyncio.to_thread(_verify, stored, password)
