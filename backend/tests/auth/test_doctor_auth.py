"""`pronghorn doctor` on auth: none refused beyond loopback and warned about on it, no TLS
in front of a wide bind, and notes from the user database (old admin keys)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import update
from sqlalchemy.engine import Connection

from ops.test_doctor import by_name, write_config
from pronghorn.auth import api_keys, users
from pronghorn.doctor import format_report, run_checks
from pronghorn.persistence.db import Database, default_sqlite_url
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import api_keys as key_table


async def test_mode_none(tmp_path: Path) -> None:
    on_loopback = by_name(await run_checks(write_config(tmp_path, auth={"mode": "none"})))["auth"]
    assert on_loopback.ok and "auth.mode is none" in on_loopback.detail
    wide = write_config(tmp_path, auth={"mode": "none"}, server={"host": "0.0.0.0"})
    results = await run_checks(wide)
    auth = by_name(results)["auth"]
    assert not auth.ok and "refused" in auth.detail
    assert "FAIL] auth" in format_report(results, as_json=False)


async def test_wide_bind_without_tls_in_front(tmp_path: Path) -> None:
    wide = by_name(await run_checks(write_config(tmp_path, server={"host": "0.0.0.0"})))["auth"]
    assert wide.ok and "trusted_proxies" in wide.detail
    proxied = write_config(
        tmp_path, server={"host": "0.0.0.0"}, auth={"trusted_proxies": ["10.0.0.0/8"]}
    )
    assert "trusted_proxies" not in by_name(await run_checks(proxied))["auth"].detail


async def test_notes_from_the_user_database(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    fresh = by_name(await run_checks(path))["auth"]
    assert fresh.ok
    db = Database(default_sqlite_url(tmp_path / "data"))
    await db.connect()
    try:
        await upgrade(db)
        assert "no users yet" in by_name(await run_checks(path))["auth"].detail
        admin = await users.create(db, username="boss", password="boss-password", role="admin")
        record, secret = await api_keys.create(db, admin.id, name="forever")

        def unit(conn: Connection):
            old = now() - timedelta(days=200)
            conn.execute(
                update(key_table).where(key_table.c.id == record.id).values(created_at=old)
            )

        await db.write(unit)
    finally:
        await db.close()
    auth = by_name(await run_checks(path))["auth"]
    assert auth.ok and "rotating" in auth.detail and record.prefix in auth.detail
    assert secret not in format_report(await run_checks(path), as_json=True)
