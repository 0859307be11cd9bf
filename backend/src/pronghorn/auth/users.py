"""Users: create, look up, update, disable; what the CLI, the HTTP API and SSO call.

Plain async functions taking the `Database`. A password change or a disable revokes the
user's sessions in the same transaction (and a disabled user's API keys stop working,
since key authentication checks the user)."""

from __future__ import annotations

import re

from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from pronghorn.auth.errors import AccountError
from pronghorn.auth.passwords import hash_password, verify_password
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import sessions as session_repo
from pronghorn.persistence.repos import users as repo
from pronghorn.persistence.repos.users import Role, User, username_key

__all__ = [
    "User",
    "by_login",
    "by_username",
    "check_login",
    "count",
    "create",
    "find_or_create_external",
    "get",
    "list_users",
    "update",
    "username_key",
]

USERNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
EMAIL_RE = re.compile(r"^[^@\s]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
ROLES: tuple[Role, ...] = ("admin", "user")


def check_username(username: str) -> str:
    name = username.strip()
    if not USERNAME_RE.fullmatch(name):
        raise AccountError(
            "username: 1-64 characters, letters, digits and . _ @ - (starting with a letter "
            "or digit)",
            422,
        )
    return name


def check_email(email: str) -> str:
    """An address-shaped email (local@domain.tld, at most 254 characters); '' clears it."""
    address = email.strip()
    if address and (len(address) > 254 or not EMAIL_RE.fullmatch(address)):
        raise AccountError("email: an address like name@example.com", 422)
    return address


def _check_login_names_free(
    conn: Connection, *, username: str | None, email: str | None, user_id: str | None
) -> None:
    """A login name (username or email) names one account: refuse (409) an email that is
    another account's username or email, or a username that is another account's email."""
    if email:
        for other in (repo.by_username(conn, email), repo.by_email(conn, email)):
            if other is not None and other.id != user_id:
                raise AccountError(f"Email {email!r} is already used by another account", 409)
    if username:
        other = repo.by_email(conn, username)
        if other is not None and other.id != user_id:
            raise AccountError(f"User {username!r} already exists", 409)


def check_role(role: str) -> Role:
    for known in ROLES:
        if role == known:
            return known
    raise AccountError("role: must be 'admin' or 'user'", 422)


def check_display_name(display_name: str) -> str:
    name = display_name.strip()
    if len(name) > 255:
        raise AccountError("display_name: at most 255 characters", 422)
    return name


async def count(db: Database) -> int:
    return await db.read(lambda conn: repo.count(conn))


async def get(db: Database, user_id: str) -> User | None:
    return await db.read(lambda conn: repo.get(conn, user_id))


async def by_username(db: Database, username: str) -> User | None:
    return await db.read(lambda conn: repo.by_username(conn, username))


async def by_login(db: Database, name: str) -> User | None:
    """The user a login name (a username or an email) names."""
    if len(name) > 255:
        return None
    return await db.read(lambda conn: repo.by_login(conn, name))


async def list_users(db: Database) -> list[User]:
    return await db.read(lambda conn: repo.list_all(conn))


async def create(
    db: Database,
    *,
    username: str,
    password: str | None,
    display_name: str | None = None,
    role: str = "user",
    only_if_first: bool = False,
    email: str | None = None,
) -> User:
    """A new user (409 if the name is taken). `only_if_first`: refuse (409) unless there is
    no user yet — the setup of the first admin, checked in the same transaction."""
    name = check_username(username)
    checked_role = check_role(role)
    shown = check_display_name(display_name or "") or name
    address = check_email(email) if email is not None else ""
    hashed = await hash_password(password) if password is not None else None

    def unit(conn: Connection) -> User:
        if only_if_first and repo.count(conn) > 0:
            raise AccountError("Setup is already done: an admin exists", 409)
        if repo.by_username(conn, name) is not None:
            raise AccountError(f"User {name!r} already exists", 409)
        _check_login_names_free(conn, username=name, email=address, user_id=None)
        return repo.insert_user(
            conn,
            username=name,
            display_name=shown,
            role=checked_role,
            password_hash=hashed,
            email=address or None,
        )

    try:
        return await db.write(unit)
    except IntegrityError:  # a concurrent create of the same name
        raise AccountError(f"User {name!r} already exists", 409) from None


async def find_or_create_external(
    db: Database,
    *,
    issuer: str,
    subject: str,
    username: str,
    display_name: str,
    role: str,
) -> User:
    """The user an SSO identity (issuer, subject) maps to, created on first login (with a
    free variant of `username` when it is taken). No password: SSO is their only way in."""
    checked_role = check_role(role)
    found = await db.read(lambda conn: repo.by_external(conn, issuer, subject))
    if found is not None:
        return found
    base = re.sub(r"[^A-Za-z0-9._@-]", "-", username.strip())[:60].strip("-.") or "user"
    if not base[0].isalnum():
        base = "u" + base
    for attempt in range(1, 100):
        name = base if attempt == 1 else f"{base}-{attempt}"

        def unit(conn: Connection, name: str = name) -> User | None:
            again = repo.by_external(conn, issuer, subject)
            if again is not None:
                return again
            if repo.by_username(conn, name) is not None:
                return None  # taken: try the next variant
            return repo.insert_user(
                conn,
                username=name,
                display_name=check_display_name(display_name) or name,
                role=checked_role,
                password_hash=None,
                external_issuer=issuer,
                external_subject=subject,
            )

        try:
            user = await db.write(unit)
        except IntegrityError:
            continue  # raced with another login: look again
        if user is not None:
            return user
    raise AccountError(f"No free username for {username!r}", 409)


async def check_login(db: Database, username: str, password: str) -> User | None:
    """The user if the login name (username or email) and password match and the user is
    enabled; None otherwise (in about the same time whether or not the user exists)."""
    user = await by_login(db, username)
    stored = user.password_hash if user is not None else None
    if not await verify_password(stored, password):
        return None
    if user is None or user.disabled:
        return None
    return user


async def update(
    db: Database,
    user_id: str,
    *,
    display_name: str | None = None,
    role: str | None = None,
    disabled: bool | None = None,
    password: str | None = None,
    email: str | None = None,
) -> tuple[User, User]:
    """Apply the changes; returns (before, after). Refuses (409) to leave no enabled admin.
    `email=""` removes the user's email."""
    new_role = check_role(role) if role is not None else None
    address = check_email(email) if email is not None else None
    shown = check_display_name(display_name) if display_name is not None else None
    hashed = await hash_password(password) if password is not None else None

    def unit(conn: Connection):
        before = repo.get(conn, user_id)
        if before is None:
            raise AccountError(f"User with ID {user_id} not found", 404)
        loses_admin = (
            before.is_admin
            and not before.disabled
            and ((new_role is not None and new_role != "admin") or disabled is True)
        )
        if loses_admin and repo.count_admins(conn) <= 1:
            raise AccountError("Refused: this is the last enabled admin", 409)
        if address:
            _check_login_names_free(conn, username=None, email=address, user_id=user_id)
        after = repo.update_user(
            conn,
            user_id,
            display_name=shown or None,
            role=new_role,
            disabled=disabled,
            password_hash=hashed,
            email=address,
        )
        assert after is not None
        if hashed is not None or disabled is True:
            session_repo.delete_for_user(conn, user_id)
        return before, after

    return await db.write(unit)
