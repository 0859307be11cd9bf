"""Uploads as a service: a thread's uploaded files, stored, listed and deleted with the same
limits and naming rules for every way in (the HTTP routes, the IM channels, the embedded
client). Names follow `upload_names`; a taken name is numbered (``a.txt`` → ``a (1).txt``),
never replaced; the per-file and per-thread total limits (``uploads.*``) hold for every
file. Each operation goes through one descriptor of the real uploads folder
(`sandbox.uploads`); blocking work runs in `asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser

from pronghorn.auth.authorizer import Action
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import Conflict, InvalidRequest, TooLarge
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.services.upload_names import numbered, safe_name
from pronghorn.runtime.services.upload_receiver import (
    FIELD,
    Receiver,
    file_too_large,
    total_too_large,
)
from pronghorn.sandbox.convert import Converted, convert_stored, copy_name, pair_copies
from pronghorn.sandbox.paths import VIRTUAL_UPLOADS, ThreadPaths, user_folder
from pronghorn.sandbox.uploads import UploadsFolder, UploadsFolderError

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


class NoFreeName(Conflict):
    """Every numbered variant of a name is taken."""


@dataclass(frozen=True, slots=True)
class UploadLimits:
    max_file_bytes: int
    max_total_bytes: int


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One file in a thread's uploads."""

    name: str
    size: int

    @property
    def virtual_path(self) -> str:
        """Where the agent sees it (``/mnt/user-data/uploads/NAME``)."""
        return f"{VIRTUAL_UPLOADS}/{self.name}"


@dataclass(frozen=True, slots=True)
class ListedFile:
    """An upload with its Markdown copy (None when it has none)."""

    file: StoredFile
    markdown: StoredFile | None


class Uploads:
    """The thread uploads of one runtime (its data dir, limits and document converter)."""

    def __init__(self, runtime: AppRuntime) -> None:
        self.runtime = runtime

    def limits(self) -> UploadLimits:
        cfg = self.runtime.config.uploads
        return UploadLimits(cfg.max_file_bytes, cfg.max_total_bytes)

    async def folders(self, access: Access, thread_id: str, action: Action = "read") -> ThreadPaths:
        """The folders of a thread `access` may `action` (`NotFound` for another user's), in
        its owner's folder: the same the agent's sandbox uses."""
        row = await load_thread(self.runtime, access, thread_id, action)
        owner = user_folder(row.owner_id)
        paths = ThreadPaths.for_thread(self.runtime.data_dir, owner, thread_id)
        await asyncio.to_thread(paths.ensure)
        return paths

    async def receive(
        self, paths: ThreadPaths, boundary: bytes, body: AsyncIterable[bytes]
    ) -> list[StoredFile]:
        """Store every file of a multipart body (field ``files``) as it streams in; all or
        nothing: a limit, a bad name or a malformed body leaves no file behind."""
        folder = await _open(paths)
        try:
            return await _receive(folder, boundary, body, self.limits())
        finally:
            await asyncio.to_thread(folder.close)

    async def store(self, paths: ThreadPaths, name: str, data: bytes) -> StoredFile:
        """Store one file (`name` made safe, numbered if taken), within the same limits as
        a multipart upload: `TooLarge` past the per-file or the thread's total limit,
        `InvalidRequest` for a name with nothing usable in it."""
        try:
            clean = safe_name(name)
        except ValueError:
            raise InvalidRequest(f"Invalid file name {name!r}.") from None
        limits = self.limits()
        if len(data) > limits.max_file_bytes:
            raise TooLarge(file_too_large(clean, limits.max_file_bytes))
        folder = await _open(paths)
        try:
            return await asyncio.to_thread(_store_one, folder, clean, data, limits)
        finally:
            await asyncio.to_thread(folder.close)

    async def convert(self, paths: ThreadPaths, names: Iterable[str]) -> list[Converted]:
        """Markdown copies of the stored documents `names` (a failure is reported per file,
        the file itself stays)."""
        config = self.runtime.config.uploads.convert
        return await convert_stored(self.runtime.documents, paths, list(names), config)

    async def entries(self, paths: ThreadPaths) -> list[StoredFile]:
        """Every file in the thread's uploads (Markdown copies included), sorted by name."""
        folder = await _open(paths)
        try:
            found = await asyncio.to_thread(folder.entries)
        finally:
            await asyncio.to_thread(folder.close)
        return [StoredFile(name, size) for name, size in found]

    async def listing(self, paths: ThreadPaths) -> list[ListedFile]:
        """The uploads, each with its Markdown copy beside it."""
        files = await self.entries(paths)
        sizes = {f.name: f.size for f in files}
        return [
            ListedFile(
                StoredFile(name, size), StoredFile(copy, sizes[copy]) if copy is not None else None
            )
            for name, size, copy in pair_copies([(f.name, f.size) for f in files])
        ]

    async def delete(self, paths: ThreadPaths, name: str) -> bool:
        """Delete an upload and its Markdown copy; False when there is no such file."""
        folder = await _open(paths)
        try:
            deleted = await asyncio.to_thread(folder.delete, name)
            if deleted:
                await asyncio.to_thread(folder.delete, copy_name(name))
        finally:
            await asyncio.to_thread(folder.close)
        return deleted


async def _open(paths: ThreadPaths) -> UploadsFolder:
    try:
        return await asyncio.to_thread(UploadsFolder.open, paths)
    except UploadsFolderError as exc:
        raise Conflict(str(exc)) from None


def _used(folder: UploadsFolder) -> int:
    return sum(size for _, size in folder.entries())


def _place(folder: UploadsFolder, temp: str, name: str) -> str:
    """Link ``temp`` under ``name`` (or ``name (n)``) without replacing anything."""
    for n in range(10_000):
        candidate = numbered(name, n)
        if folder.link(temp, candidate):
            return candidate
    raise NoFreeName(f"No free name for {name!r}: delete some uploads first.")


def _store_one(folder: UploadsFolder, name: str, data: bytes, limits: UploadLimits) -> StoredFile:
    remaining = max(0, limits.max_total_bytes - _used(folder))
    if len(data) > remaining:
        raise TooLarge(total_too_large(remaining))
    temp, handle = folder.create_temp()
    try:
        with handle:
            handle.write(data)
        return StoredFile(_place(folder, temp, name), len(data))
    finally:
        folder.unlink([temp])


async def _receive(
    folder: UploadsFolder, boundary: bytes, body: AsyncIterable[bytes], limits: UploadLimits
) -> list[StoredFile]:
    used = await asyncio.to_thread(_used, folder)
    receiver = Receiver(
        folder=folder,
        max_file=limits.max_file_bytes,
        remaining=max(0, limits.max_total_bytes - used),
    )
    parser = MultipartParser(boundary, receiver.callbacks())
    placed: list[str] = []
    try:
        async for chunk in body:
            parser.write(chunk)
            await receiver.apply()
        parser.finalize()
        await receiver.apply()
        if receiver.current is not None:
            raise InvalidRequest("The multipart body ended in the middle of a file.")
        if not receiver.done:
            raise InvalidRequest(f"No files: send them in the multipart field {FIELD!r}.")
        files: list[StoredFile] = []
        for part in receiver.done:
            assert part.temp is not None and part.name is not None
            name = await asyncio.to_thread(_place, folder, part.temp, part.name)
            placed.append(name)
            files.append(StoredFile(name, part.size))
    except MultipartParseError as exc:
        await receiver.abort()
        await asyncio.to_thread(folder.unlink, placed)
        raise InvalidRequest(f"Malformed multipart body: {exc}") from None
    except BaseException:
        await receiver.abort()
        await asyncio.to_thread(folder.unlink, placed)
        raise
    await asyncio.to_thread(folder.unlink, receiver.temps)
    return files
