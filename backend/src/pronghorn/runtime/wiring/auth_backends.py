"""The authenticator and authorizer `auth.mode` asks for, built once at startup."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pronghorn.auth.authenticator import Authenticator, NoAuth
from pronghorn.auth.authorizer import AllowAll, Authorizer
from pronghorn.auth.custom.handlers import CustomAuthConfigError, custom_auth
from pronghorn.config.schema.app import AppConfig
from pronghorn.graphs.loading import load_object


async def load_custom_auth(spec: str, config_dir: Path) -> tuple[Authenticator, Authorizer]:
    """`auth.mode: custom`: import the `Auth` object `spec` names (relative to the config
    file's folder, as graphs are) and build its backends; `CustomAuthConfigError` says what
    is wrong."""
    try:
        obj = await asyncio.to_thread(load_object, spec, config_dir)
    except Exception as exc:  # import errors, missing file or attribute, a bad decorator
        raise CustomAuthConfigError(f"auth.custom {spec!r}: {exc}") from exc
    built = custom_auth(obj, spec)
    return built.authenticator, built.authorizer


async def auth_backends(config: AppConfig, config_dir: Path) -> tuple[Authenticator, Authorizer]:
    if config.auth.mode == "custom":
        if not config.auth.custom:
            raise CustomAuthConfigError("auth.mode custom needs auth.custom")
        return await load_custom_auth(config.auth.custom, config_dir)
    return NoAuth(), AllowAll()
