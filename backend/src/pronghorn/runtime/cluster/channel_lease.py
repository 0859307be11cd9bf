"""A channel receiver's lease kept in the database (a row of `channel_leases`): the
channels' lease when the broker is not Redis (channels/lease.py picks)."""

from __future__ import annotations

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import channel_leases


class SqlLease:
    """Take, renew and give up `channels:<name>` as one holder (a random token)."""

    def __init__(self, db: Database, holder: str) -> None:
        self.db = db
        self.holder = holder

    async def take(self, channel: str, ttl_s: float) -> bool:
        return await self.db.write(
            lambda conn: channel_leases.take(conn, channel, self.holder, ttl_s)
        )

    async def give_up(self, channel: str) -> None:
        await self.db.write(lambda conn: channel_leases.give_up(conn, channel, self.holder))
