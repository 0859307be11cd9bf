"""A channel's receiver lease as a row: taken when free or expired, renewed by its holder,
given up on stop. Expiry is the writer's clock (replicas' clocks must agree to well within
the lease's time to live)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, insert, or_, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import channel_leases


def take(conn: Connection, channel: str, holder: str, ttl_s: float) -> bool:
    """Take or renew the lease for `ttl_s`; False while another holder's is unexpired."""
    ts = now()
    c = channel_leases.c
    try:
        with conn.begin_nested():  # a row inserted meanwhile fails this savepoint only
            found = conn.execute(
                update(channel_leases)
                .where(c.channel == channel, or_(c.holder == holder, c.expires_at < ts))
                .values(holder=holder, expires_at=ts + timedelta(seconds=ttl_s))
            )
            if found.rowcount:
                return True
            conn.execute(
                insert(channel_leases).values(
                    channel=channel, holder=holder, expires_at=ts + timedelta(seconds=ttl_s)
                )
            )
    except IntegrityError:  # the row exists and is someone else's (or was just inserted)
        return False
    return True


def give_up(conn: Connection, channel: str, holder: str) -> None:
    conn.execute(
        delete(channel_leases).where(
            channel_leases.c.channel == channel, channel_leases.c.holder == holder
        )
    )
