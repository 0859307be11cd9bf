"""Files between a chat and a thread: an inbound image gets the extension of its real format
(it is then stored through the runtime's `Uploads`, like any upload), artifacts the agent
presents are read to be sent. Blocking work runs in `asyncio.to_thread`."""

from __future__ import annotations

import asyncio
import os

from pronghorn.sandbox import safe_open
from pronghorn.sandbox.paths import ThreadPaths

# An image's format by its first bytes, and the extension it is saved under.
_IMAGE_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "png"),
    (b"\xff\xd8\xff", 0, "jpg"),
    (b"GIF87a", 0, "gif"),
    (b"GIF89a", 0, "gif"),
    (b"WEBP", 8, "webp"),
    (b"BM", 0, "bmp"),
)
_IMAGE_EXTS = {
    "png": "png",
    "jpg": "jpg",
    "jpeg": "jpg",
    "gif": "gif",
    "webp": "webp",
    "bmp": "bmp",
}


def image_kind(data: bytes) -> str | None:
    """The image format `data` is (its usual extension), by its magic bytes."""
    for magic, at, ext in _IMAGE_MAGIC:
        if data[at : at + len(magic)] == magic and (ext != "webp" or data[:4] == b"RIFF"):
            return ext
    return None


def with_real_extension(name: str, data: bytes) -> str:
    """`name` with the extension of the image `data` really is, when the platform gave an
    image a generic name (`image.png` for a JPEG, a photo without extension); any other
    name (a document, a name the user chose for a non-image) is kept."""
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    if ext and ext.lower() not in _IMAGE_EXTS:
        return name
    kind = image_kind(data)
    if kind is None or _IMAGE_EXTS.get(ext.lower()) == kind:
        return name
    return f"{stem}.{kind}"


def _read(paths: ThreadPaths, virtual: str, max_bytes: int) -> bytes | None:
    with safe_open.open_file(paths, virtual) as opened:
        if opened.info.st_size > max_bytes:
            return None
        chunks: list[bytes] = []
        while chunk := os.read(opened.fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)


async def read_artifact(paths: ThreadPaths, virtual: str, max_bytes: int) -> bytes | None:
    """An artifact's bytes; None when it is larger than `max_bytes`. Raises SandboxError
    for a path outside the thread or a missing file."""
    return await asyncio.to_thread(_read, paths, virtual, max_bytes)
