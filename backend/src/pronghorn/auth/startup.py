"""Startup checks of `auth.mode` and the first-run setup link."""

from __future__ import annotations

import ipaddress
import logging
import sys
from pathlib import Path

from pronghorn.auth import setup_token, users
from pronghorn.config.schema.app import AppConfig
from pronghorn.persistence.db import Database

log = logging.getLogger("pronghorn.auth")

NONE_WARNING = (
    "auth.mode is none: there is no login, anyone who can reach this port acts as the "
    "admin. Use it only on a single-user machine; see docs/security.md."
)


class AuthModeRefused(RuntimeError):
    """The configured auth mode is unsafe for where the server listens."""


def is_loopback(host: str) -> bool:
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refusal(mode: str, bind: str) -> str | None:
    """Why the server must not start with `mode` listening on `bind`, or None."""
    if mode == "none" and not is_loopback(bind):
        return (
            f"auth.mode: none is refused: the server would listen on {bind}, beyond "
            "loopback, where anyone who can reach the port would act as the admin. Use "
            "auth.mode: local (the default), or bind to 127.0.0.1 (server.host)."
        )
    return None


def check_mode(config: AppConfig) -> None:
    """Refuse an unsafe mode (raises `AuthModeRefused`); warn loudly about `none`."""
    reason = refusal(config.auth.mode, config.server.host)
    if reason is not None:
        raise AuthModeRefused(reason)
    if config.auth.mode == "none":
        log.warning(NONE_WARNING)


def setup_link(config: AppConfig, token: str) -> str:
    host = config.server.host
    if host in ("0.0.0.0", "::", "[::]", ""):
        host = "localhost"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{config.server.port}/setup?token={token}"


async def prepare_setup(db: Database, config: AppConfig, data_dir: Path) -> str | None:
    """With no user yet (mode local), make sure the setup token exists and print the link
    (stderr, like Jupyter); once there are users, remove a leftover token. Returns the link."""
    if config.auth.mode != "local":
        return None
    if await users.count(db) > 0:
        await setup_token.remove(data_dir)
        return None
    token = await setup_token.ensure(data_dir)
    link = setup_link(config, token)
    path = setup_token.token_path(data_dir)
    banner = (
        "\n    No users yet. Create the admin account within your browser:\n\n"
        f"        {link}\n\n"
        f"    (the token is also in {path}; it works once)\n"
    )
    print(banner, file=sys.stderr, flush=True)
    log.info("first run: setup link printed on stderr; token file %s", path)
    return link
