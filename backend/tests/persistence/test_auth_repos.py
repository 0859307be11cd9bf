"""The auth tables on SQLite and PostgreSQL: the migration matches the models, usernames
are unique case-insensitively, SSO identities map to one user, sessions and keys resolve
and are revoked, the audit log pages newest first."""

from __future__ import annotations

from datetime import timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from pronghorn.auth import api_keys, audit, sessions, users
from pronghorn.auth.errors import AccountError
from pronghorn.persistence.db import Database
from pronghorn.persistence.tables import metadata

AUTH_TABLES = {"users", "sessions", "api_keys", "audit_log"}


async def test_migration_0002_matches_the_tables(db: Database) -> None:
    def diff(conn: Connection) -> list[object]:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))

    changes = await db.read(diff)
    touching = [c for c in changes if any(t in repr(c) for t in AUTH_TABLES)]
    assert touching == []


async def test_users(db: Database) -> None:
    alice = await users.create(db, username="Alice", password="alice-password", role="admin")
    assert alice.password_hash and alice.password_hash.startswith("$argon2id$")
    with pytest.raises(AccountError) as exc:
        await users.create(db, username="ALICE", password="another-one")
    assert exc.value.status == 409
    with pytest.raises(AccountError):
        await users.create(db, username="x", password="x", only_if_first=False)  # weak
    assert (await users.by_username(db, "alice")) == alice
    assert await users.check_login(db, "alice", "alice-password") == alice
    assert await users.check_login(db, "alice", "wrong-password") is None
    assert await users.check_login(db, "nobody", "alice-password") is None
    with pytest.raises(AccountError) as exc:
        await users.update(db, alice.id, disabled=True)  # the last admin
    assert exc.value.status == 409
    with pytest.raises(AccountError):
        await users.create(db, username="bob", password="bob-password", only_if_first=True)


async def test_external_users(db: Database) -> None:
    await users.create(db, username="carol", password="carol-password")
    kwargs = {"issuer": "https://idp", "subject": "42", "display_name": "Carol C", "role": "user"}
    first = await users.find_or_create_external(db, username="carol", **kwargs)
    assert first.username == "carol-2" and first.password_hash is None
    again = await users.find_or_create_external(db, username="whatever", **kwargs)
    assert again.id == first.id
    assert await users.check_login(db, "carol-2", "") is None


async def test_sessions_and_revocation(db: Database) -> None:
    user = await users.create(db, username="dan", password="dan-password")
    cookie, csrf = await sessions.start(db, user.id)
    found = await sessions.resolve(db, cookie)
    assert found is not None and found.user.id == user.id and found.csrf_token == csrf
    assert await sessions.resolve(db, "forged") is None
    short, _ = await sessions.start(db, user.id, ttl=timedelta(seconds=-1))
    assert await sessions.resolve(db, short) is None  # expired
    await users.update(db, user.id, password="dan-password-2")
    assert await sessions.resolve(db, cookie) is None
    cookie, _ = await sessions.start(db, user.id)
    assert await sessions.end(db, cookie) and await sessions.resolve(db, cookie) is None


async def test_api_keys(db: Database) -> None:
    user = await users.create(db, username="erin", password="erin-password")
    record, secret = await api_keys.create(db, user.id, name="ci")
    check = await api_keys.resolve(db, secret)
    assert check.refusal is None and check.user is not None and check.user.id == user.id
    assert (await api_keys.resolve(db, secret + "x")).refusal == "unknown"
    listed = await api_keys.list_keys(db, user.id)
    assert [k.id for k in listed] == [record.id] and listed[0].last_used_at is not None
    with pytest.raises(AccountError):
        await api_keys.revoke(db, record.id, user_id="someone-else")
    await api_keys.revoke(db, record.id, user_id=user.id)
    assert (await api_keys.resolve(db, secret)).refusal == "revoked"
    _, other = await api_keys.create(db, user.id, name="other")
    await users.create(db, username="admin", password="admin-password", role="admin")
    await users.update(db, user.id, disabled=True)
    assert (await api_keys.resolve(db, other)).refusal == "disabled"


async def test_audit_paging(db: Database) -> None:
    for n in range(7):
        await audit.record(db, "test", target=str(n), detail={"n": n})
    page = await audit.page(db, limit=3)
    assert [e.target for e in page] == ["6", "5", "4"]
    rest = await audit.page(db, limit=10, before=page[-1].id)
    assert [e.target for e in rest] == ["3", "2", "1", "0"] and rest[0].detail == {"n": 3}
