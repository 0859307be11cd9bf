"""A channel's receiver lease as a row: taken when free or expired, renewed by its holder,
given up on stop. Expiry is the writer's clock (replicas' clocks must agree to well within
the lease's time to live)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, insert, or_, update
from sqlalchemy.exc import IntegrityError

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import channel_leases


async def take(db: Database, channel: str, holder: str, ttl_s: float) -> bool:
    """Take or renew the lease for `ttl_s`; False while another holder's is unexpired."""
    ts = now()
    c = channel_leases.c
    try:
        async with db.tx() as conn:
            found = await conn.execute(
                update(channel_leases)
                .where(c.channel == channel, or_(c.holder == holder, c.expires_at < ts))
                .values(holder=holder, expires_at=ts + timedelta(seconds=ttl_s))
            )
            if found.rowcount:
                return True
            await conn.execute(
                insert(channel_leases).values(
                    channel=channel, holder=holder, expires_at=ts + timedelta(seconds=ttl_s)
                )
            )
    except IntegrityError:  # the row exists and is someone else's (or was just inserted)
        return False
    return True


async def give_up(db: Database, channel: str, holder: str) -> None:
    async with db.tx() as conn:
        await conn.execute(
            delete(channel_leases).where(
                channel_leases.c.channel == channel, channel_leases.c.holder == holder
            )
        )
