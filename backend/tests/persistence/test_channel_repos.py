"""The channels' SQL state: migration 0004 matches the tables; dedupe, codes, bindings."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import channels as repo
from pronghorn.persistence.tables import metadata

TABLES = {"channel_threads", "channel_dedupe", "channel_bindings", "channel_codes"}


async def test_migration_0004_matches_the_tables(db: Database) -> None:
    def diff(conn: Connection) -> list[object]:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))

    changes = await db.read(diff)
    assert [c for c in changes if any(t in repr(c) for t in TABLES)] == []


async def test_dedupe_remembers_within_the_ttl(db: Database) -> None:
    assert await db.write(lambda conn: repo.first_delivery(conn, "telegram", "1:2", ttl_s=600))
    assert not await db.write(lambda conn: repo.first_delivery(conn, "telegram", "1:2", ttl_s=600))
    assert await db.write(
        lambda conn: repo.first_delivery(conn, "slack", "1:2", ttl_s=600)
    )  # per channel
    # beyond the TTL the old row is purged and the key counts as new again
    assert await db.write(lambda conn: repo.first_delivery(conn, "telegram", "1:2", ttl_s=1e-9))


async def test_codes_are_single_use_per_channel_and_expire(db: Database) -> None:
    principal = {"identity": "u1", "display_name": "U One", "role": "user", "kind": "session"}
    await db.write(
        lambda conn: repo.add_code(
            conn, code_hash="h1", channel="slack", owner_id="u1", principal=principal, ttl_s=60
        )
    )
    wrong = await db.write(
        lambda conn: repo.redeem_code(
            conn, code_hash="h1", channel="telegram", external_id="x", external_name=""
        )
    )
    assert wrong is None
    bound = await db.write(
        lambda conn: repo.redeem_code(
            conn, code_hash="h1", channel="slack", external_id="U7", external_name="seven"
        )
    )
    assert bound is not None and bound.owner_id == "u1"
    again = await db.write(
        lambda conn: repo.redeem_code(
            conn, code_hash="h1", channel="slack", external_id="U8", external_name=""
        )
    )
    assert again is None
    await db.write(
        lambda conn: repo.add_code(
            conn, code_hash="h2", channel="slack", owner_id="u2", principal=principal, ttl_s=1e-9
        )
    )
    late = await db.write(
        lambda conn: repo.redeem_code(
            conn, code_hash="h2", channel="slack", external_id="U7", external_name=""
        )
    )
    assert late is None
    assert (await db.read(lambda conn: repo.binding_of(conn, "slack", "U7"))) == bound
    assert [b.id for b in await db.read(lambda conn: repo.bindings(conn, "u2"))] == []
    assert (
        await db.write(lambda conn: repo.revoke_binding(conn, bound.id, "u2")) is False
    )  # not theirs
    assert await db.write(lambda conn: repo.revoke_binding(conn, bound.id, "u1")) is True
    assert await db.read(lambda conn: repo.binding_of(conn, "slack", "U7")) is None
