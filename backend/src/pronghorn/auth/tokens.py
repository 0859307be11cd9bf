"""Random secrets and their stored form: only a sha256 of a session token or key is kept."""

from __future__ import annotations

import hashlib
import hmac
import secrets

API_KEY_PREFIX = "phk_"
PREFIX_SHOWN = 12  # "phk_" + 8 characters: enough to tell keys apart in a list


def new_token() -> str:
    return secrets.token_urlsafe(32)


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def shown_prefix(key: str) -> str:
    return key[:PREFIX_SHOWN]


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
