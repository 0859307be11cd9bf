"""The one-time setup token (`<data_dir>/setup-token`, mode 0600), Jupyter style.

While there is no user, the server makes sure the file exists and prints a setup link
with its token; creating the first admin (over HTTP with the token, or with the CLI)
deletes it. The file, not process memory, is the truth, so replicas and the CLI agree."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from pronghorn.auth.tokens import new_token, same

FILE_NAME = "setup-token"


def token_path(data_dir: Path) -> Path:
    return data_dir / FILE_NAME


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None


def _ensure(path: Path) -> str:
    existing = _read(path)
    if existing is not None:
        return existing
    token = new_token()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another replica wrote it first
        raced = _read(path)
        if raced is not None:
            return raced
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token


async def ensure(data_dir: Path) -> str:
    """The setup token, written now unless a live one is on disk."""
    return await asyncio.to_thread(_ensure, token_path(data_dir))


async def matches(data_dir: Path, candidate: str) -> bool:
    token = await asyncio.to_thread(_read, token_path(data_dir))
    return token is not None and same(token, candidate)


def remove_sync(data_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        token_path(data_dir).unlink()


async def remove(data_dir: Path) -> None:
    await asyncio.to_thread(remove_sync, data_dir)
