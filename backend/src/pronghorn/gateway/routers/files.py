"""Thread files: uploads (``/api/threads/{id}/uploads``) and artifacts (``/artifacts/...``).

Uploads are streamed part by part into hidden temp files inside the thread's uploads folder;
sizes are checked while streaming (per file and per thread total) and a request that breaks
a limit or names a bad file is answered 413/400 with nothing left behind. Only when every
part arrived are the temp files linked under their final, de-duplicated names.

Artifacts are served from the thread folders (``workspace``, ``uploads``, ``outputs``) with
containment checks, Range support, ``nosniff`` always, and ``attachment`` for active content.
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import os
import stat
import unicodedata
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import FileResponse
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from pronghorn.gateway.deps import check_uuid, get_runtime
from pronghorn.gateway.errors import ApiError, not_found
from pronghorn.gateway.serialization import JSONResponse
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.runtime.runtime import Runtime
from pronghorn.sandbox.errors import PathDeniedError
from pronghorn.sandbox.paths import VIRTUAL_ROOT, VIRTUAL_UPLOADS, ThreadPaths

router = APIRouter(prefix="/api/threads/{thread_id}", tags=["files"])

USER_ID = "default"
FIELD = "files"
MAX_NAME_BYTES = 255
MAX_OTHER_FIELD_BYTES = 64 * 1024
ACTIVE_TYPES = {
    "text/html",
    "application/xhtml+xml",
    "image/svg+xml",
    "text/xml",
    "application/xml",
}
_TEMP_PREFIX = ".upload-"


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


def numbered(name: str, n: int) -> str:
    """``report.pdf`` → ``report (n).pdf``."""
    if n == 0:
        return name
    stem, ext = _split(name)
    return f"{stem} ({n}){ext}"


def artifact_url(thread_id: str, virtual_path: str) -> str:
    rel = virtual_path[len(VIRTUAL_ROOT) + 1 :]
    return f"/api/threads/{thread_id}/artifacts/{quote(rel)}"


def file_entry(thread_id: str, name: str, size: int) -> dict[str, Any]:
    virtual = f"{VIRTUAL_UPLOADS}/{name}"
    return {
        "name": name,
        "size": size,
        "virtual_path": virtual,
        "url": artifact_url(thread_id, virtual),
    }


# --- blocking helpers (run in a thread) -------------------------------------------------------


def _list_uploads(folder: Path) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    with contextlib.suppress(FileNotFoundError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            out.append((entry.name, entry.stat(follow_symlinks=False).st_size))
    return sorted(out)


def _place(folder: Path, temp: Path, name: str) -> str:
    """Link ``temp`` under ``name`` (or ``name (n)``) without replacing anything."""
    for n in range(10_000):
        candidate = numbered(name, n)
        try:
            os.link(temp, folder / candidate)
        except FileExistsError:
            continue
        return candidate
    raise OSError(f"no free name for {name!r}")


def _unlink_all(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


# --- multipart streaming ----------------------------------------------------------------------


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str | None = None
    temp: Path | None = None
    fh: BinaryIO | None = None
    size: int = 0


@dataclass
class _Receiver:
    """Turns multipart parser callbacks into events, then applies them asynchronously."""

    folder: Path
    max_file: int
    remaining: int
    events: list[tuple[str, Any]] = field(default_factory=list)
    done: list[_Part] = field(default_factory=list)
    temps: list[Path] = field(default_factory=list)
    current: _Part | None = None
    other_bytes: int = 0
    new_bytes: int = 0
    _hfield: bytearray = field(default_factory=bytearray)
    _hvalue: bytearray = field(default_factory=bytearray)

    def callbacks(self) -> dict[str, Any]:
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
        part.temp = self.folder / f"{_TEMP_PREFIX}{uuid.uuid4().hex}.part"
        self.temps.append(part.temp)
        part.fh = await asyncio.to_thread(open, part.temp, "xb")

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
        await asyncio.to_thread(_unlink_all, self.temps)


def _boundary(request: Request) -> bytes:
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if content_type != b"multipart/form-data" or not boundary:
        raise ApiError(415, "Send the files as multipart/form-data in the field 'files'.")
    return boundary


# --- routes -----------------------------------------------------------------------------------


async def _thread_paths(runtime: Runtime, thread_id: str) -> ThreadPaths:
    tid = check_uuid(thread_id, "thread")
    async with runtime.db.read() as conn:
        if await threads_repo.get_row(conn, tid) is None:
            raise not_found("Thread", tid)
    paths = ThreadPaths.for_thread(runtime.data_dir, USER_ID, tid)
    await asyncio.to_thread(paths.ensure)
    return paths


def _limits(runtime: Runtime) -> dict[str, int]:
    cfg = runtime.config.uploads
    return {"max_file_bytes": cfg.max_file_bytes, "max_total_bytes": cfg.max_total_bytes}


@router.post("/uploads")
async def upload(
    thread_id: str, request: Request, runtime: Runtime = Depends(get_runtime)
) -> JSONResponse:
    """Upload one or more files (multipart field ``files``) into the thread's uploads."""
    boundary = _boundary(request)
    paths = await _thread_paths(runtime, thread_id)
    limits = _limits(runtime)
    used = sum(size for _, size in await asyncio.to_thread(_list_uploads, paths.uploads))
    receiver = _Receiver(
        folder=paths.uploads,
        max_file=limits["max_file_bytes"],
        remaining=max(0, limits["max_total_bytes"] - used),
    )
    parser = MultipartParser(boundary, receiver.callbacks())
    placed: list[Path] = []
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
        files = []
        for part in receiver.done:
            assert part.temp is not None and part.name is not None
            name = await asyncio.to_thread(_place, paths.uploads, part.temp, part.name)
            placed.append(paths.uploads / name)
            files.append(file_entry(paths.thread_id, name, part.size))
    except MultipartParseError as exc:
        await receiver.abort()
        await asyncio.to_thread(_unlink_all, placed)
        raise ApiError(400, f"Malformed multipart body: {exc}") from None
    except BaseException:
        await receiver.abort()
        await asyncio.to_thread(_unlink_all, placed)
        raise
    await asyncio.to_thread(_unlink_all, receiver.temps)
    return JSONResponse({"files": files})


@router.get("/uploads")
async def list_uploads(thread_id: str, runtime: Runtime = Depends(get_runtime)) -> JSONResponse:
    """The thread's uploaded files and the upload limits."""
    paths = await _thread_paths(runtime, thread_id)
    entries = await asyncio.to_thread(_list_uploads, paths.uploads)
    files = [file_entry(paths.thread_id, name, size) for name, size in entries]
    return JSONResponse({"files": files, "limits": _limits(runtime)})


@router.delete("/uploads/{name}", status_code=204)
async def delete_upload(
    thread_id: str, name: str, runtime: Runtime = Depends(get_runtime)
) -> Response:
    """Delete one uploaded file (404 when there is no such file)."""
    paths = await _thread_paths(runtime, thread_id)

    def _delete() -> bool:
        if "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
            return False
        target = paths.uploads / name
        if not target.is_file() or target.is_symlink():
            return False
        target.unlink()
        return True

    if not await asyncio.to_thread(_delete):
        raise ApiError(404, f"Upload {name!r} not found")
    return Response(status_code=204)


def _artifact_virtual(path: str) -> str:
    rel = path.lstrip("/")
    prefix = VIRTUAL_ROOT.lstrip("/") + "/"
    if rel.startswith(prefix):
        rel = rel[len(prefix) :]
    parts = rel.split("/")
    if any(p in ("..", ".") for p in parts) or "\\" in rel or "\x00" in rel or not rel:
        raise ApiError(400, "Invalid artifact path.")
    return f"{VIRTUAL_ROOT}/{rel}"


@router.api_route("/artifacts/{path:path}", methods=["GET", "HEAD"])
async def artifact(
    thread_id: str,
    path: str,
    request: Request,
    download: bool = False,
    runtime: Runtime = Depends(get_runtime),
) -> Response:
    """A file of the thread (``outputs/x.md``, ``uploads/y.png``...). Range requests work."""
    virtual = _artifact_virtual(path)
    paths = await _thread_paths(runtime, thread_id)
    try:
        host = await asyncio.to_thread(paths.resolve_virtual, virtual)
    except PathDeniedError:
        raise ApiError(403, "Access denied: that path is outside the thread's files.") from None
    try:
        info = await asyncio.to_thread(os.stat, host)
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        raise ApiError(404, f"Artifact {virtual!r} not found")
    name = host.name
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    active = media_type in ACTIVE_TYPES or media_type.endswith("+xml")
    disposition = "attachment" if (download or active) else "inline"
    return FileResponse(
        host,
        media_type=media_type,
        filename=name,
        stat_result=info,
        content_disposition_type=disposition,
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-cache"},
    )
