"""What the config-editing routers share: admins only, the config file as a round-trip
document, and an edit applied to it (config/file_edit.py) with its failures as HTTP errors:
no file or unwritable 409, invalid result 400 (nothing is written)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import Depends

from pronghorn.auth.principal import Principal
from pronghorn.config.errors import ConfigError
from pronghorn.config.file_edit import Edit, NoConfigFile, apply_edit, read_document
from pronghorn.gateway.deps import get_principal
from pronghorn.gateway.errors import ApiError
from pronghorn.runtime.wiring.app_runtime import AppRuntime

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap


def editable_path(runtime: AppRuntime) -> Path | None:
    """The file a settings page edits: the config file, or on a server started without
    one the file its first save creates (``<data_dir>/config.yaml``); None: not editable."""
    return runtime.settings.source_path or runtime.settings.first_run_path


async def admin(principal: Principal = Depends(get_principal)) -> Principal:
    if not principal.is_admin:
        raise ApiError(403, "Admins only")
    return principal


async def document(runtime: AppRuntime) -> CommentedMap:
    """The config file (empty without one); 409 if it cannot be read."""
    path = runtime.settings.source_path
    if path is None:
        from ruamel.yaml.comments import (
            CommentedMap,
        )  # ruamel: loaded by the first config edit, not at every start

        return CommentedMap()
    try:
        return await asyncio.to_thread(read_document, path)
    except ConfigError as exc:
        raise ApiError(409, str(exc)) from None


async def edit_file(runtime: AppRuntime, edit: Edit) -> None:
    """Validate, write atomically and reload; an invalid result is a 400, nothing written."""
    try:
        await apply_edit(runtime.settings, edit)
    except NoConfigFile as exc:
        raise ApiError(409, str(exc)) from None
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from None
    except OSError as exc:
        raise ApiError(409, f"cannot write the config file: {exc}") from None
