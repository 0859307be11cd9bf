"""The thread's uploads folder, used through one folder descriptor.

A command in the sandbox (with ``isolation: none``) can replace ``uploads`` by a symlink
at any time. Every operation here is relative to a descriptor of the real folder, opened
once from the thread root with ``O_NOFOLLOW``: temp files are created in it
(``O_EXCL | O_NOFOLLOW``), final names are hard links inside it, listing and deleting use
it, so nothing is ever written, listed or deleted through a link. All methods block: call
them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from typing import BinaryIO

from pronghorn.sandbox import safe_open
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import ThreadPaths

TEMP_PREFIX = ".upload-"
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UploadsFolderError(SandboxError):
    """The uploads folder is missing or is not a real folder (e.g. replaced by a link)."""


class UploadsFolder:
    """An open descriptor of one thread's ``uploads`` folder. Close it when done."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def open(cls, paths: ThreadPaths) -> UploadsFolder:
        root = safe_open.open_root(paths)
        try:
            fd = os.open("uploads", safe_open.DIR_FLAGS, dir_fd=root)
        except OSError:
            raise UploadsFolderError(
                "The thread's uploads folder is not a folder (a command replaced it, e.g. by "
                "a link); remove /mnt/user-data/uploads in the sandbox, then retry."
            ) from None
        finally:
            os.close(root)
        return cls(fd)

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise ValueError("the uploads folder is closed")
        return self._fd

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> UploadsFolder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def entries(self) -> list[tuple[str, int]]:
        """``(name, size)`` of each visible regular file (no links, no dot files), sorted."""
        out: list[tuple[str, int]] = []
        with os.scandir(self.fd) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    out.append((entry.name, info.st_size))
        return sorted(out)

    def create_temp(self) -> tuple[str, BinaryIO]:
        """A new hidden temp file (its name and an open binary file object)."""
        name = f"{TEMP_PREFIX}{uuid.uuid4().hex}.part"
        fd = os.open(name, _CREATE, 0o660, dir_fd=self.fd)
        return name, os.fdopen(fd, "wb")

    def link(self, temp: str, name: str) -> bool:
        """Link ``temp`` as ``name``; False when ``name`` is taken (nothing replaced)."""
        try:
            os.link(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
        except FileExistsError:
            return False
        return True

    def unlink(self, names: list[str]) -> None:
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=self.fd)

    def delete(self, name: str) -> bool:
        """Delete the regular file ``name`` (a plain name, not a dot file); False if none."""
        if not name or "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
            return False
        try:
            info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except OSError:
            return False
        if not stat.S_ISREG(info.st_mode):
            return False
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            return False
        return True


def list_uploads(paths: ThreadPaths) -> list[tuple[str, int]]:
    """The thread's uploaded files; empty when it has no (real) uploads folder."""
    try:
        folder = UploadsFolder.open(paths)
    except SandboxError:
        return []
    with folder:
        return folder.entries()
