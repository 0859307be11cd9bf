"""Idempotency keys as a service: claim a user's key for one request, record the result a
retry replays, or free the key when the request failed. One row of `idempotency_keys` per
user and key, so every replica agrees (the HTTP side: gateway/idempotency.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pronghorn.persistence.repos import idempotency as repo
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.repos.idempotency import KeyRecord

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

__all__ = ["IdempotencyKeys", "KeyRecord"]


class IdempotencyKeys:
    def __init__(self, runtime: AppRuntime) -> None:
        self.db = runtime.db

    async def claim(
        self, *, owner_id: str, key: str, fingerprint: str, ttl_s: float, stale_s: float
    ) -> KeyRecord | None:
        """Take the key for this request (None), or the record already holding it (a
        pending one older than `stale_s` is taken over)."""
        return await self.db.write(
            lambda conn: repo.claim(
                conn,
                owner_id=owner_id,
                key=key,
                fingerprint=fingerprint,
                at=now(),
                ttl_s=ttl_s,
                stale_s=stale_s,
            )
        )

    async def finish(self, *, owner_id: str, key: str, result: dict[str, object]) -> None:
        """Record what a retry with the key replays."""
        await self.db.write(
            lambda conn: repo.finish(conn, owner_id=owner_id, key=key, result=result, at=now())
        )

    async def release(self, *, owner_id: str, key: str) -> None:
        """Free the key (the request failed: a retry runs it again)."""
        await self.db.write(lambda conn: repo.release(conn, owner_id=owner_id, key=key))
