"""Thread files: uploads (``/api/threads/{id}/uploads``) and artifacts (``/artifacts/...``).

Uploads go through the runtime's `Uploads` service (runtime/services/uploads.py), the same for the
IM channels and the embedded client: parts are streamed into hidden temp files, sizes are
checked while streaming (per file and per thread total), and a request that breaks a limit
or names a bad file is answered 413/400 with nothing left behind. Only when every part
arrived are the temp files linked under their final, de-duplicated names.

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
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request, Response
from python_multipart.multipart import parse_options_header

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
from pronghorn.runtime.services.uploads import Uploads
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.sandbox import safe_open
from pronghorn.sandbox.convert import Converted
from pronghorn.sandbox.errors import PathDeniedError, SandboxError
from pronghorn.sandbox.paths import VIRTUAL_ROOT, VIRTUAL_UPLOADS, ThreadPaths

router = APIRouter(prefix="/api/threads/{thread_id}", tags=["files"])

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


# --- answers ---------------------------------------------------------------------------------


def artifact_url(thread_id: str, virtual_path: str) -> str:
    rel = virtual_path[len(VIRTUAL_ROOT) + 1 :]
    return f"/api/threads/{thread_id}/artifacts/{quote(rel)}"


def file_entry(thread_id: str, name: str, size: int) -> dict[str, object]:
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
    thread_id: str, entry: dict[str, object], done: Converted | None
) -> dict[str, object]:
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


def _boundary(request: Request) -> bytes:
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if content_type != b"multipart/form-data" or not boundary:
        raise ApiError(415, "Send the files as multipart/form-data in the field 'files'.")
    return boundary


# --- routes -----------------------------------------------------------------------------------


async def _thread_paths(
    runtime: AppRuntime, access: Access, thread_id: str, action: Action = "read"
) -> ThreadPaths:
    """The folders of a thread `access` may `action` (404 for another user's)."""
    return await Uploads(runtime).folders(access, check_uuid(thread_id, "thread"), action)


def _limits(runtime: AppRuntime) -> dict[str, int]:
    limits = Uploads(runtime).limits()
    return {"max_file_bytes": limits.max_file_bytes, "max_total_bytes": limits.max_total_bytes}


@router.post(
    "/uploads",
    response_model=UploadResult,
    responses=errors(400, 403, 404, 409, 413, 415, 422, 507),
    openapi_extra=MULTIPART_FILES,
)
async def upload(
    thread_id: str,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Upload one or more files (multipart field ``files``) into the thread's uploads."""
    boundary = _boundary(request)
    uploads = Uploads(runtime)
    paths = await _thread_paths(runtime, access, thread_id, "update")
    stored = await uploads.receive(paths, boundary, request.stream())
    # Every file is stored by now; a document that cannot be converted only gets an error.
    done = {c.source: c for c in await uploads.convert(paths, (f.name for f in stored))}
    tid = paths.thread_id
    files = [
        with_conversion(tid, file_entry(tid, f.name, f.size), done.get(f.name)) for f in stored
    ]
    noun = "file" if len(files) == 1 else "files"
    return JSONResponse(
        {
            "files": files,
            "success": True,
            "message": f"Uploaded {len(files)} {noun}",
            "skipped_files": [],
        }
    )


@router.get("/uploads", response_model=UploadList, responses=errors(404, 409, 422))
async def list_uploads(
    thread_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """The thread's uploaded files and the upload limits."""
    paths = await _thread_paths(runtime, access, thread_id)
    files: list[dict[str, object]] = []
    for listed in await Uploads(runtime).listing(paths):
        entry = file_entry(paths.thread_id, listed.file.name, listed.file.size)
        copy = listed.markdown
        markdown = file_entry(paths.thread_id, copy.name, copy.size) if copy is not None else None
        files.append({**entry, "markdown": markdown})
    return JSONResponse({"files": files, "limits": _limits(runtime)})


@router.delete(
    "/uploads/{name}", response_model=UploadDeleted, responses=errors(400, 404, 409, 422)
)
async def delete_upload(
    thread_id: str,
    name: str,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Delete one uploaded file and its Markdown copy: ``{success: true, message}`` (404
    when there is no such file)."""
    paths = await _thread_paths(runtime, access, thread_id, "update")
    if not await Uploads(runtime).delete(paths, name):
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
    runtime: AppRuntime = Depends(get_runtime),
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
    runtime: AppRuntime, access: Access, thread_id: str
) -> tuple[str, list[tuple[str, int]]]:
    """(thread id, [(name, size)]) of the thread's uploads, for other routers' listings
    (the DeerFlow-shaped one)."""
    paths = await _thread_paths(runtime, access, thread_id)
    return paths.thread_id, [(f.name, f.size) for f in await Uploads(runtime).entries(paths)]
