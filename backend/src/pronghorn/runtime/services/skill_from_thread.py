"""Install a ``.skill`` archive that is a file of one of the caller's threads (DeerFlow's
``POST /api/skills/install {thread_id, path}``): e.g. what the skill-creator skill wrote
to ``/mnt/user-data/outputs/<name>.skill``."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import InvalidInput, NotFound
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.services.skills import SkillView
from pronghorn.sandbox import safe_open
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import ThreadPaths, user_folder, validate_thread_id

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


def _read(paths: ThreadPaths, virtual: str, limit: int) -> bytes:
    with safe_open.open_file(paths, virtual) as opened:
        if opened.info.st_size > limit:
            raise InvalidInput(f"Invalid skill archive: the archive is larger than {limit} bytes")
        return os.read(opened.fd, limit + 1)


async def install_from_thread(
    runtime: AppRuntime, access: Access, thread_id: str, path: str
) -> SkillView:
    try:
        tid = validate_thread_id(thread_id)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    row = await load_thread(runtime, access, tid)
    paths = ThreadPaths.for_thread(runtime.data_dir, user_folder(row.owner_id), tid)
    limit = runtime.config.skills.max_install_bytes
    try:
        data = await asyncio.to_thread(_read, paths, path, limit)
    except safe_open.MissingPathError:
        raise NotFound(f"File {path} not found in thread {tid}") from None
    except SandboxError as exc:
        raise InvalidInput(str(exc)) from None
    return await runtime.skills.install(access, data)
