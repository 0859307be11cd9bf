"""Serve an already-open file descriptor over HTTP, with single-range support.

``FileResponse`` takes a *path* and opens it again when sending: if the path was checked
first, a concurrent rename can make that second open land somewhere else. This response
is built from a descriptor that the caller opened (and checked) once; it reads with
``pread`` in a worker thread, stops when the client goes away, and always closes the
descriptor, whether the response was sent, failed or never started.

Range handling follows RFC 9110: one ``bytes=`` range (``a-b``, ``a-``, ``-n``) gives 206
with ``Content-Range``; an unsatisfiable one gives 416 with ``Content-Range: bytes */size``;
a malformed or multi-range header, or an ``If-Range`` that does not match, is ignored
(200, the whole file).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from email.utils import formatdate

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

CHUNK_BYTES = 64 * 1024


def _validators(info: os.stat_result) -> tuple[str, str]:
    tag = hashlib.md5(
        f"{info.st_dev}-{info.st_ino}-{info.st_mtime_ns}-{info.st_size}".encode(),
        usedforsecurity=False,
    ).hexdigest()
    return f'"{tag}"', formatdate(info.st_mtime, usegmt=True)


def parse_range(header: str | None, size: int) -> tuple[int, int] | str | None:
    """``(start, end_inclusive)``, ``None`` (serve everything) or ``"unsatisfiable"``."""
    if not header:
        return None
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, dash, last = spec.strip().partition("-")
    first, last = first.strip(), last.strip()
    if not dash or not (first.isdigit() or first == "") or not (last.isdigit() or last == ""):
        return None
    if first == "":
        if last == "":
            return None
        n = int(last)
        if n == 0 or size == 0:
            return "unsatisfiable"
        return max(0, size - n), size - 1
    start = int(first)
    if last != "" and int(last) < start:
        return None  # invalid: ignored
    if start >= size:
        return "unsatisfiable"
    end = size - 1 if last == "" else min(int(last), size - 1)
    return start, end


class DescriptorResponse(Response):
    """Send ``length`` bytes of ``fd`` from ``offset``; the response owns ``fd``."""

    def __init__(
        self,
        fd: int,
        *,
        offset: int,
        length: int,
        status_code: int,
        headers: dict[str, str],
        media_type: str | None,
        head: bool,
    ) -> None:
        self._fd: int | None = fd
        self._offset = offset
        self._length = length
        self._head = head
        super().__init__(status_code=status_code, headers=headers, media_type=media_type)

    def close_descriptor(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:  # a response dropped without being sent
        with contextlib.suppress(Exception):
            self.close_descriptor()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gone = asyncio.Event()

        async def watch() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    gone.set()
                    return

        watcher = asyncio.create_task(watch())
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": self.status_code,
                    "headers": self.raw_headers,
                }
            )
            offset, left = self._offset, 0 if self._head else self._length
            finished = False
            while left > 0 and not gone.is_set():
                fd = self._fd
                assert fd is not None
                data = await asyncio.to_thread(os.pread, fd, min(CHUNK_BYTES, left), offset)
                if not data:
                    break  # the file shrank meanwhile: end the body early
                offset += len(data)
                left -= len(data)
                finished = left == 0
                await send({"type": "http.response.body", "body": data, "more_body": not finished})
            if not finished and not gone.is_set():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            self.close_descriptor()


def serve_descriptor(
    fd: int,
    info: os.stat_result,
    request: Request,
    *,
    media_type: str,
    headers: dict[str, str],
) -> Response:
    """The response for a GET/HEAD of the open regular file ``fd`` (``info`` its fstat).

    Takes ownership of ``fd`` in every case.
    """
    size = info.st_size
    etag, modified = _validators(info)
    base: dict[str, str] = {
        **headers,
        "accept-ranges": "bytes",
        "etag": etag,
        "last-modified": modified,
    }
    wanted = parse_range(request.headers.get("range"), size)
    if_range = request.headers.get("if-range")
    if wanted is not None and if_range is not None and if_range.strip() not in (etag, modified):
        wanted = None
    head = request.method == "HEAD"
    if wanted == "unsatisfiable":
        os.close(fd)
        return JSONResponse(
            {"detail": f"Range not satisfiable: the file has {size} bytes."},
            status_code=416,
            headers={**headers, "content-range": f"bytes */{size}", "accept-ranges": "bytes"},
        )
    if isinstance(wanted, tuple):
        start, end = wanted
        length = end - start + 1
        base |= {"content-range": f"bytes {start}-{end}/{size}", "content-length": str(length)}
        return DescriptorResponse(
            fd,
            offset=start,
            length=length,
            status_code=206,
            headers=base,
            media_type=media_type,
            head=head,
        )
    base["content-length"] = str(size)
    return DescriptorResponse(
        fd, offset=0, length=size, status_code=200, headers=base, media_type=media_type, head=head
    )
