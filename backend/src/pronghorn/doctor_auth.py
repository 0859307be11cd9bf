"""`pronghorn doctor`'s auth checks: the mode for where the server listens, TLS in front,
and weak setups in the user database (read only; never a secret printed)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.engine import Connection

from pronghorn.auth.startup import is_loopback, refusal
from pronghorn.config.schema.app import AppConfig
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import api_keys as key_repo
from pronghorn.persistence.repos import users as user_repo
from pronghorn.persistence.repos.api_keys import ApiKey
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.repos.users import User

OLD_KEY = timedelta(days=90)


def mode_findings(config: AppConfig, host: str) -> tuple[list[str], list[str]]:
    """(failures, warnings) about auth.mode and TLS for a server listening on `host`."""
    failures: list[str] = []
    warnings: list[str] = []
    refused = refusal(config.auth.mode, host)
    if refused:
        failures.append(refused)
    elif config.auth.mode == "none":
        warnings.append("auth.mode is none: no login, whoever reaches the port is the admin")
    if not is_loopback(host) and not config.auth.trusted_proxies:
        warnings.append(
            f"listening on {host} with no auth.trusted_proxies: passwords, cookies and keys "
            "cross the network in clear unless TLS terminates in front (put nginx with TLS "
            "in front and list it in auth.trusted_proxies; see docs/security.md)"
        )
    return failures, warnings


async def database_findings(db: Database) -> tuple[list[str], list[str]]:
    """(warnings, notes) about the accounts in the database."""
    warnings: list[str] = []
    notes: list[str] = []

    def unit(conn: Connection) -> tuple[list[User], dict[str, list[ApiKey]]]:
        everyone = user_repo.list_all(conn)
        admins = [u for u in everyone if u.is_admin and not u.disabled]
        return everyone, {a.id: key_repo.list_for_user(conn, a.id) for a in admins}

    everyone, admin_keys = await db.read(unit)
    if not everyone:
        notes.append("no users yet: the server prints the setup link at its next start")
        return warnings, notes
    admins = [u for u in everyone if u.is_admin and not u.disabled]
    if not admins:
        warnings.append("no enabled admin: create one with `pronghorn users create NAME --admin`")
    cutoff = now() - OLD_KEY
    for admin in admins:
        for key in admin_keys[admin.id]:
            if key.revoked_at is None and key.expires_at is None and key.created_at < cutoff:
                notes.append(
                    f"admin {admin.username} has key {key.prefix}… ({key.name}) older than "
                    "90 days with no expiry: consider rotating it"
                )
    return warnings, notes
