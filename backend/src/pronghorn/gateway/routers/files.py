"""Thread files: uploads (``/api/threads/{id}/uploads``) and artifacts (``/artifacts/...``).

Uploads are streamed part by part into hidden temp files inside the thread's uploads folder;
sizes are checked while streaming (per file and per thread total) and a request that breaks
a limit or names a bad file is answered 413/400 with nothing left behind. Only when every
part arrived are the temp files linked under their final, de-duplicated names. Every step
goes through one descriptor of the real uploads folder (``sandbox.uploads``).

Artifacts are served from the thread folders (``workspace``, ``uploads``, ``outputs``): the
file is opened once, walking from the thread root without following links out of it
(``sandbox.safe_open``), and that descriptor is what gets sent (Range support). Every
artifact answer has ``nosniff``, a restrictive Content-Security-Policy, and is ``inline``
only for a short list of passive types; anything else is an ``attachment``.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request, Response
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

from pronghorn.auth.authorizer import Action
from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.descriptor_response import serve_descriptor
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.files import (
    FILE_BYTES,
    MULTIPART_FILES,
    UploadDeleted,
    UploadList,
    UploadResult,
)
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.access import Access
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.runtime import Runtime
from pronghorn.sandbox import safe_open
from pronghorn.sandbox.convert import Converted, convert_stored, copy_name, pair_copies
from pronghorn.sandbox.errors import PathDeniedError, SandboxError
from pronghorn.sandbox.paths import VIRTUAL_ROOT, VIRTUAL_UPLOADS, ThreadPaths, user_folder
from pronghorn.sandbox.uploads import UploadsFolder, UploadsFolderError

router = APIRouter(prefix="/api/threads/{thread_id}", tags=["files"])

FIELD = "files"
MAX_NAME_BYTES = 255
MAX_OTHER_FIELD_BYTES = 64 * 1024
# Types a browser shows without running anything: served inline. Everything else (HTML,
# SVG, XML, MHTML, scripts, unknown types...) is an attachment.
INLINE_TYPES = frozenset(
    {
        "text/plain",
        "text/markdown",
        "text/csv",
        "text/tab-separated-values",
        "application/json",
        "application/pdf",
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "image/avif",
        "image/bmp",
    }
)
INLINE_PREFIXES = ("audio/", "video/")
ARTIFACT_CSP = (
    "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; sandbox"
)
# Chromium's PDF viewer does not run in a CSP sandbox; PDFs get the policy without it.
PDF_CSP = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'"


# --- names ------------------------------------------------------------------------------------


def safe_name(raw: str) -> str:
    """A file name safe to store: no folders, control or format characters, leading dots.

    Raises ``ValueError`` when nothing usable is left.
    """
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    name = unicodedata.normalize("NFC", name)
    name = "".join(ch for ch in name if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))
    name = name.strip().lstrip(". ").rstrip(" ")
    if not name:
        raise ValueError(f"invalid file name {raw!r}")
    while len(name.encode()) > MAX_NAME_BYTES:
        stem, ext = _split(name)
        name = (stem[:-1] + ext) if len(stem) > 1 else name[: len(name) - 1]
    return name


def _split(name: str) -> tuple[str, str]:
    stem, ext = os.path.splitext(name)
    return (stem, ext) if stem else (name, "")


def _cut(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` that is at most ``max_bytes`` in UTF-8."""
    return text.encode()[: max(0, max_bytes)].decode("utf-8", "ignore")


def numbered(name: str, n: int) -> str:
    """``report.pdf`` → ``report (n).pdf``, shortened to stay within 255 bytes."""
    if n == 0:
        return name
    stem, ext = _split(name)
    tag = f" ({n})"
    room = MAX_NAME_BYTES - len(tag.encode())
    if len(ext.encode()) > room // 2:  # a "extension" this long is part of the name
        stem, ext = name, ""
    return _cut(stem, room - len(ext.encode())) + tag + ext


def artifact_url(thread_id: str, virtual_path: str) -> str:
    rel = virtual_path[len(VIRTUAL_ROOT) + 1 :]
    return f"/api/threads/{thread_id}/artifacts/{quote(rel)}"


def file_entry(thread_id: str, name: str, size: int) -> dict[str, Any]:
    """An uploaded file: ours (`name`, `url`) and DeerFlow's names (`filename`, `path`,
    `artifact_url`, `extension`...) in one entry."""
    virtual = f"{VIRTUAL_UPLOADS}/{name}"
    url = artifact_url(thread_id, virtual)
    return {
        "name": name,
        "size": size,
        "virtual_path": virtual,
        "url": url,
        "filename": name,
        "original_filename": name,
        "path": virtual,
        "artifact_url": url,
        "extension": os.path.splitext(name)[1].lstrip(".").lower(),
    }


def with_conversion(
    thread_id: str, entry: dict[str, Any], done: Converted | None
) -> dict[str, Any]:
    """``entry`` with its Markdown copy, or the reason it has none (both None for a file
    that is not converted)."""
    if done is None or done.name is None:
        return {**entry, "markdown": None, "conversion_error": done.error if done else None}
    copy = file_entry(thread_id, done.name, done.size)
    return {
        **entry,
        "markdown": {**copy, "truncated": done.truncated},
        "conversion_error": None,
    }


# --- blocking helpers (run in a thread) -------------------------------------------------------


def _place(folder: UploadsFolder, temp: str, name: str) -> str:
    """Link ``temp`` under ``name`` (or ``name (n)``) without replacing anything."""
    for n in range(10_000):
        candidate = numbered(name, n)
        if folder.link(temp, candidate):
            return candidate
    raise ApiError(409, f"No free name for {name!r}: delete some uploads first.")


# --- multipart streaming ----------------------------------------------------------------------


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str | None = None
    temp: str | None = None
    fh: BinaryIO | None = None
    size: int = 0


@dataclass
class _Receiver:
    """Turns multipart parser callbacks into events, then applies them asynchronously."""

    folder: UploadsFolder
    max_file: int
    remaining: int
    events: list[tuple[str, Any]] = field(default_factory=list)
    done: list[_Part] = field(default_factory=list)
    temps: list[str] = field(default_factory=list)
    current: _Part | None = None
    other_bytes: int = 0
    new_bytes: int = 0
    _hfield: bytearray = field(default_factory=bytearray)
    _hvalue: bytearray = field(default_factory=bytearray)

    def callbacks(self) -> MultipartCallbacks:
        def header_end() -> None:
            self.events.append(("header", (bytes(self._hfield).lower(), bytes(self._hvalue))))
            self._hfield.clear()
            self._hvalue.clear()

        return {
            "on_part_begin": lambda: self.events.append(("begin", None)),
            "on_header_field": lambda d, s, e: self._hfield.extend(d[s:e]),
            "on_header_value": lambda d, s, e: self._hvalue.extend(d[s:e]),
            "on_header_end": header_end,
            "on_headers_finished": lambda: self.events.append(("headers", None)),
            "on_part_data": lambda d, s, e: self.events.append(("data", bytes(d[s:e]))),
            "on_part_end": lambda: self.events.append(("end", None)),
        }

    async def apply(self) -> None:
        events, self.events = self.events, []
        for kind, value in events:
            if kind == "begin":
                self.current = _Part()
            elif kind == "header" and self.current is not None:
                self.current.headers[value[0]] = value[1]
            elif kind == "headers" and self.current is not None:
                await self._start(self.current)
            elif kind == "data" and self.current is not None:
                await self._data(self.current, value)
            elif kind == "end" and self.current is not None:
                if self.current.fh is not None:
                    await asyncio.to_thread(self.current.fh.close)
                    self.current.fh = None
                    self.done.append(self.current)
                self.current = None

    async def _start(self, part: _Part) -> None:
        disposition = part.headers.get(b"content-disposition", b"")
        _, options = parse_options_header(disposition)
        field_name = options.get(b"name", b"").decode("utf-8", "replace")
        filename = options.get(b"filename")
        if field_name != FIELD or filename is None:
            return
        raw = filename.decode("utf-8", "replace")
        try:
            part.name = safe_name(raw)
        except ValueError:
            raise ApiError(400, f"Invalid file name {raw!r}.") from None
        part.temp, part.fh = await asyncio.to_thread(self.folder.create_temp)
        self.temps.append(part.temp)

    async def _data(self, part: _Part, data: bytes) -> None:
        if part.fh is None:
            self.other_bytes += len(data)
            if self.other_bytes > MAX_OTHER_FIELD_BYTES:
                raise ApiError(413, "Form fields other than files are too large.")
            return
        part.size += len(data)
        self.new_bytes += len(data)
        if part.size > self.max_file:
            raise ApiError(
                413,
                f"File {part.name!r} is larger than the per-file upload limit of "
                f"{self.max_file} bytes. Nothing was uploaded.",
            )
        if self.new_bytes > self.remaining:
            raise ApiError(
                413,
                "These uploads would exceed the thread's total upload limit "
                f"({self.remaining} bytes left). Nothing was uploaded.",
            )
        await asyncio.to_thread(part.fh.write, data)

    async def abort(self) -> None:
        for part in [*self.done, self.current]:
            if part is not None and part.fh is not None:
                await asyncio.to_thread(part.fh.close)
        await asyncio.to_thread(self.folder.unlink, self.temps)


def _boundary(request: Request) -> bytes:
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if content_type != b"multipart/form-data" or not boundary:
        raise ApiError(415, "Send the files as multipart/form-data in the field 'files'.")
    return boundary


# --- routes -----------------------------------------------------------------------------------


async def _thread_paths(
    runtime: Runtime, access: Access, thread_id: str, action: Action = "read"
) -> ThreadPaths:
    """The folders of a thread `access` may `action` (404 for another user's), in its
    owner's folder: the same the agent's sandbox uses."""
    tid = check_uuid(thread_id, "thread")
    row = await load_thread(runtime, access, tid, action)
    paths = ThreadPaths.for_thread(runtime.data_dir, user_folder(row["owner_id"]), tid)
    await asyncio.to_thread(paths.ensure)
    return paths


def _limits(runtime: Runtime) -> dict[str, int]:
    cfg = runtime.config.uploads
    return {"max_file_bytes": cfg.max_file_bytes, "max_total_bytes": cfg.max_total_bytes}


async def _open_uploads(paths: ThreadPaths) -> UploadsFolder:
    try:
        return await asyncio.to_thread(UploadsFolder.open, paths)
    except UploadsFolderError as exc:
        raise ApiError(409, str(exc)) from None


@router.post(
    "/uploads",
    response_model=UploadResult,
    responses=errors(400, 403, 404, 409, 413, 415, 422, 507),
    openapi_extra=MULTIPART_FILES,
)
async def upload(
    thread_id: str,
    request: Request,
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Upload one or more files (multipart field ``files``) into the thread's uploads."""
    boundary = _boundary(request)
    paths = await _thread_paths(runtime, access, thread_id, "update")
    folder = await _open_uploads(paths)
    try:
        files = await _receive(request, boundary, folder, paths, _limits(runtime))
    finally:
        await asyncio.to_thread(folder.close)
    # Every file is stored by now; a document that cannot be converted only gets an error.
    config = runtime.config.uploads.convert
    names = [f["name"] for f in files]
    done = {c.source: c for c in await convert_stored(runtime.documents, paths, names, config)}
    files = [with_conversion(paths.thread_id, f, done.get(f["name"])) for f in files]
    noun = "file" if len(files) == 1 else "files"
    return JSONResponse(
        {
            "files": files,
            "success": True,
            "message": f"Uploaded {len(files)} {noun}",
            "skipped_files": [],
        }
    )


async def _receive(
    request: Request,
    boundary: bytes,
    folder: UploadsFolder,
    paths: ThreadPaths,
    limits: dict[str, int],
) -> list[dict[str, Any]]:
    used = sum(size for _, size in await asyncio.to_thread(folder.entries))
    receiver = _Receiver(
        folder=folder,
        max_file=limits["max_file_bytes"],
        remaining=max(0, limits["max_total_bytes"] - used),
    )
    parser = MultipartParser(boundary, receiver.callbacks())
    placed: list[str] = []
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            await receiver.apply()
        parser.finalize()
        await receiver.apply()
        if receiver.current is not None:
            raise ApiError(400, "The multipart body ended in the middle of a file.")
        if not receiver.done:
            raise ApiError(400, "No files: send them in the multipart field 'files'.")
        files: list[dict[str, Any]] = []
        for part in receiver.done:
            assert part.temp is not None and part.name is not None
            name = await asyncio.to_thread(_place, folder, part.temp, part.name)
            placed.append(name)
            files.append(file_entry(paths.thread_id, name, part.size))
    except MultipartParseError as exc:
        await receiver.abort()
        await asyncio.to_thread(folder.unlink, placed)
        raise ApiError(400, f"Malformed multipart body: {exc}") from None
    except BaseException:
        await receiver.abort()
        await asyncio.to_thread(folder.unlink, placed)
        raise
    await asyncio.to_thread(folder.unlink, receiver.temps)
    return files


@router.get("/uploads", response_model=UploadList, responses=errors(404, 409, 422))
async def list_uploads(
    thread_id: str, runtime: Runtime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """The thread's uploaded files and the upload limits."""
    paths = await _thread_paths(runtime, access, thread_id)
    folder = await _open_uploads(paths)
    try:
        entries = await asyncio.to_thread(folder.entries)
    finally:
        await asyncio.to_thread(folder.close)
    sizes = dict(entries)
    files: list[dict[str, Any]] = []
    for name, size, copy in pair_copies(entries):
        entry = file_entry(paths.thread_id, name, size)
        markdown = file_entry(paths.thread_id, copy, sizes[copy]) if copy is not None else None
        files.append({**entry, "markdown": markdown})
    return JSONResponse({"files": files, "limits": _limits(runtime)})


@router.delete(
    "/uploads/{name}", response_model=UploadDeleted, responses=errors(400, 404, 409, 422)
)
async def delete_upload(
    thread_id: str,
    name: str,
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Delete one uploaded file and its Markdown copy: ``{success: true, message}`` (404
    when there is no such file)."""
    paths = await _thread_paths(runtime, access, thread_id, "update")
    folder = await _open_uploads(paths)
    try:
        deleted = await asyncio.to_thread(folder.delete, name)
        if deleted:
            await asyncio.to_thread(folder.delete, copy_name(name))
    finally:
        await asyncio.to_thread(folder.close)
    if not deleted:
        raise ApiError(404, f"Upload {name!r} not found")
    return JSONResponse({"success": True, "message": f"Deleted {name}"})


def _artifact_virtual(path: str) -> str:
    rel = path.lstrip("/")
    prefix = VIRTUAL_ROOT.lstrip("/") + "/"
    if rel.startswith(prefix):
        rel = rel[len(prefix) :]
    parts = rel.split("/")
    if any(p in ("..", ".") for p in parts) or "\\" in rel or "\x00" in rel or not rel:
        raise ApiError(400, "Invalid artifact path.")
    return f"{VIRTUAL_ROOT}/{rel}"


def artifact_policy(name: str, download: bool) -> tuple[str, str, str]:
    """``(media_type, disposition, csp)`` for an artifact called ``name``."""
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    passive = media_type in INLINE_TYPES or media_type.startswith(INLINE_PREFIXES)
    disposition = "inline" if passive and not download else "attachment"
    csp = PDF_CSP if media_type == "application/pdf" else ARTIFACT_CSP
    return media_type, disposition, csp


def content_disposition(disposition: str, name: str) -> str:
    quoted = quote(name)
    if quoted != name:
        return f"{disposition}; filename*=utf-8''{quoted}"
    return f'{disposition}; filename="{name}"'


# One route per method, so each gets its own OpenAPI operation id.
@router.get(
    "/artifacts/{path:path}",
    response_class=Response,
    responses={**FILE_BYTES, **errors(400, 403, 404, 422)},
)
@router.head(
    "/artifacts/{path:path}",
    response_class=Response,
    responses={**FILE_BYTES, **errors(400, 403, 404, 422)},
)
async def artifact(
    thread_id: str,
    path: str,
    request: Request,
    download: bool = False,
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    """A file of the thread (``outputs/x.md``, ``uploads/y.png``...). Range requests work."""
    virtual = _artifact_virtual(path)
    paths = await _thread_paths(runtime, access, thread_id)
    try:
        opened = await asyncio.to_thread(safe_open.open_file, paths, virtual)
    except PathDeniedError:
        raise ApiError(403, "Access denied: that path is outside the thread's files.") from None
    except SandboxError:  # missing, a folder, a FIFO...
        raise ApiError(404, f"Artifact {virtual!r} not found") from None
    name = opened.virtual.rsplit("/", 1)[-1]
    media_type, disposition, csp = artifact_policy(name, download)
    headers = {
        "x-content-type-options": "nosniff",
        "cache-control": "private, no-cache",
        "content-security-policy": csp,
        "content-disposition": content_disposition(disposition, name),
    }
    return serve_descriptor(opened.fd, opened.info, request, media_type=media_type, headers=headers)


async def upload_entries(
    runtime: Runtime, access: Access, thread_id: str
) -> tuple[str, list[tuple[str, int]]]:
    """(thread id, [(name, size)]) of the thread's uploads, for other routers' listings
    (the DeerFlow-shaped one)."""
    paths = await _thread_paths(runtime, access, thread_id)
    folder = await _open_uploads(paths)
    try:
        return paths.thread_id, await asyncio.to_thread(folder.entries)
    finally:
        await asyncio.to_thread(folder.close)
