"""`pronghorn users ...` and `pronghorn keys ...`: accounts on the database of the config
(the same one a running server uses; SQLite's WAL lets both work at once)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import click

from pronghorn.auth import api_keys, audit, setup_token, users
from pronghorn.auth.errors import AccountError
from pronghorn.config.errors import ConfigError
from pronghorn.config.loader import load_config, resolve_config_path
from pronghorn.config.schema.app import AppConfig
from pronghorn.persistence.db import Database, default_sqlite_url
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.repos.users import User

T = TypeVar("T")

config_option = click.option("--config", "config_file", default=None, help="Path to config.yaml.")


def _target(config_file: str | None) -> tuple[AppConfig, Path]:
    """The config and its data dir, resolved as the server does (runtime.runtime is not
    imported: it loads LangGraph, and the CLI should start fast)."""
    try:
        cfg = load_config(resolve_config_path(config_file, os.environ)).config
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    base = Path(os.environ.get("PRONGHORN_BASE_DIR") or Path.cwd())
    data_dir = Path(cfg.data_dir).expanduser()
    data_dir = (data_dir if data_dir.is_absolute() else base / data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    return cfg, data_dir


def _run(config_file: str | None, work: Callable[[Database, Path], Awaitable[T]]) -> T:
    cfg, data_dir = _target(config_file)

    async def main() -> T:
        db = Database(
            cfg.database.url or default_sqlite_url(data_dir),
            busy_timeout_ms=cfg.database.busy_timeout_ms,
            pool_size=2,
        )
        await db.connect()
        try:
            await upgrade(db)
            return await work(db, data_dir)
        finally:
            await db.close()

    try:
        return asyncio.run(main())
    except AccountError as exc:
        raise click.ClickException(exc.detail) from None


def _read_password() -> str:
    line = sys.stdin.readline()
    password = line.removesuffix("\n").removesuffix("\r")
    if not password:
        raise click.ClickException("no password on stdin")
    return password


async def _user(db: Database, name: str) -> User:
    user = await users.by_username(db, name)
    if user is None:
        raise click.ClickException(f"no user named {name!r}")
    return user


@click.group("users")
def users_group() -> None:
    """Manage users (auth.mode: local)."""


@users_group.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="Give the user the admin role.")
@click.option("--display-name", default=None, help="Name shown in the UI (default: NAME).")
@click.option("--email", default=None, help="An email the user can also log in with.")
@click.option("--password-stdin", is_flag=True, required=True, help="Read the password from stdin.")
@config_option
def users_create(
    name: str,
    admin: bool,
    display_name: str | None,
    email: str | None,
    password_stdin: bool,
    config_file: str | None,
) -> None:
    """Create a user."""
    password = _read_password()

    async def work(db: Database, data_dir: Path) -> User:
        user = await users.create(
            db,
            username=name,
            password=password,
            display_name=display_name,
            role="admin" if admin else "user",
            email=email,
        )
        await audit.record(
            db, "user.create", target=user.id, detail={"username": user.username, "via": "cli"}
        )
        if admin:  # the first admin exists: the setup link is spent
            await setup_token.remove(data_dir)
        return user

    user = _run(config_file, work)
    click.echo(f"created {user.role} {user.username} ({user.id})")


@users_group.command("list")
@config_option
def users_list(config_file: str | None) -> None:
    """List users."""

    async def work(db: Database, _: Path) -> list[User]:
        return await users.list_users(db)

    for user in _run(config_file, work):
        state = "disabled" if user.disabled else "active"
        click.echo(f"{user.id}  {user.username}  {user.role}  {state}  {user.display_name}")


@users_group.command("disable")
@click.argument("name")
@config_option
def users_disable(name: str, config_file: str | None) -> None:
    """Disable a user: their sessions end and their API keys stop working at once."""

    async def work(db: Database, _: Path) -> User:
        user = await _user(db, name)
        _before, after = await users.update(db, user.id, disabled=True)
        await audit.record(
            db, "user.disable", target=user.id, detail={"username": user.username, "via": "cli"}
        )
        return after

    user = _run(config_file, work)
    click.echo(f"disabled {user.username}")


@users_group.command("passwd")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, required=True, help="Read the password from stdin.")
@config_option
def users_passwd(name: str, password_stdin: bool, config_file: str | None) -> None:
    """Set a user's password (their sessions end)."""
    password = _read_password()

    async def work(db: Database, _: Path) -> User:
        user = await _user(db, name)
        _before, after = await users.update(db, user.id, password=password)
        await audit.record(
            db, "password.change", target=user.id, detail={"username": user.username, "via": "cli"}
        )
        return after

    user = _run(config_file, work)
    click.echo(f"password changed for {user.username}")


@users_group.command("email")
@click.argument("name")
@click.argument("email")
@config_option
def users_email(name: str, email: str, config_file: str | None) -> None:
    """Set the email a user can also log in with ('' removes it)."""

    async def work(db: Database, _: Path) -> User:
        user = await _user(db, name)
        _before, after = await users.update(db, user.id, email=email)
        await audit.record(
            db,
            "user.update",
            target=user.id,
            detail={"username": user.username, "changed": ["email"], "via": "cli"},
        )
        return after

    user = _run(config_file, work)
    click.echo(f"email of {user.username}: {user.email or '(none)'}")


@click.group("keys")
def keys_group() -> None:
    """Manage API keys (auth.mode: local)."""


@keys_group.command("create")
@click.argument("username")
@click.option("--name", "label", default="cli", show_default=True, help="Label of the key.")
@click.option("--expires-in-days", type=float, default=None, help="Default: never expires.")
@config_option
def keys_create(
    username: str, label: str, expires_in_days: float | None, config_file: str | None
) -> None:
    """Create an API key; the key is printed alone on the last line (shown only once)."""

    async def work(db: Database, _: Path) -> tuple[api_keys.ApiKey, str]:
        user = await _user(db, username)
        record, secret = await api_keys.create(
            db, user.id, name=label, expires_in_days=expires_in_days
        )
        await audit.record(
            db,
            "key.create",
            actor=None,
            target=record.id,
            detail={"name": record.name, "prefix": record.prefix, "via": "cli"},
        )
        return record, secret

    record, secret = _run(config_file, work)
    expiry = record.expires_at.isoformat() if record.expires_at else "never"
    click.echo(f"key {record.id} ({record.name}) for {username}, expires: {expiry}", err=False)
    click.echo(secret)


@keys_group.command("list")
@click.argument("username")
@config_option
def keys_list(username: str, config_file: str | None) -> None:
    """List a user's API keys (never the secrets)."""

    async def work(db: Database, _: Path) -> list[api_keys.ApiKey]:
        return await api_keys.list_keys(db, (await _user(db, username)).id)

    for key in _run(config_file, work):
        state = "revoked" if key.revoked_at else "active"
        used = key.last_used_at.isoformat() if key.last_used_at else "never used"
        expiry = key.expires_at.isoformat() if key.expires_at else "no expiry"
        click.echo(f"{key.id}  {key.prefix}…  {key.name}  {state}  {used}  {expiry}")


@keys_group.command("revoke")
@click.argument("key_id")
@config_option
def keys_revoke(key_id: str, config_file: str | None) -> None:
    """Revoke an API key (refused from then on)."""

    async def work(db: Database, _: Path) -> api_keys.ApiKey:
        record = await api_keys.revoke(db, key_id)
        await audit.record(
            db, "key.revoke", target=record.id, detail={"name": record.name, "via": "cli"}
        )
        return record

    record = _run(config_file, work)
    click.echo(f"revoked {record.id} ({record.name})")
