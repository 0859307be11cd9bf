"""The streaming receiver of a multipart upload: parts are written into hidden temp files of
the thread's uploads folder as they arrive, the size limits (per file, per thread total) are
checked while streaming, and a body that breaks a rule raises a domain error with nothing
left behind. Placing the temp files under their final names is the caller's (`uploads.py`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, Literal

from python_multipart.multipart import parse_options_header

from pronghorn.runtime.errors import InvalidRequest, TooLarge
from pronghorn.runtime.services.upload_names import safe_name
from pronghorn.sandbox.uploads import UploadsFolder

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

FIELD = "files"
MAX_OTHER_FIELD_BYTES = 64 * 1024

EventKind = Literal["begin", "header", "headers", "data", "end"]


@dataclass
class Part:
    """One multipart part being received (a file when `fh` is set)."""

    headers: dict[bytes, bytes] = field(default_factory=dict[bytes, bytes])
    name: str | None = None
    temp: str | None = None
    fh: BinaryIO | None = None
    size: int = 0


@dataclass(frozen=True)
class _Event:
    kind: EventKind
    data: bytes = b""
    header: tuple[bytes, bytes] = (b"", b"")


@dataclass
class Receiver:
    """Turns multipart parser callbacks into events (synchronously, as the parser calls),
    then applies them asynchronously (`apply`): file work runs in a thread."""

    folder: UploadsFolder
    max_file: int
    remaining: int
    events: list[_Event] = field(default_factory=list[_Event])
    done: list[Part] = field(default_factory=list[Part])
    temps: list[str] = field(default_factory=list[str])
    current: Part | None = None
    other_bytes: int = 0
    new_bytes: int = 0
    _hfield: bytearray = field(default_factory=bytearray)
    _hvalue: bytearray = field(default_factory=bytearray)

    def callbacks(self) -> MultipartCallbacks:
        def header_end() -> None:
            header = (bytes(self._hfield).lower(), bytes(self._hvalue))
            self.events.append(_Event("header", header=header))
            self._hfield.clear()
            self._hvalue.clear()

        def data(d: bytes, s: int, e: int) -> None:
            self.events.append(_Event("data", data=bytes(d[s:e])))

        return {
            "on_part_begin": lambda: self.events.append(_Event("begin")),
            "on_header_field": lambda d, s, e: self._hfield.extend(d[s:e]),
            "on_header_value": lambda d, s, e: self._hvalue.extend(d[s:e]),
            "on_header_end": header_end,
            "on_headers_finished": lambda: self.events.append(_Event("headers")),
            "on_part_data": data,
            "on_part_end": lambda: self.events.append(_Event("end")),
        }

    async def apply(self) -> None:
        events, self.events = self.events, []
        for event in events:
            if event.kind == "begin":
                self.current = Part()
                continue
            part = self.current
            if part is None:
                continue
            if event.kind == "header":
                part.headers[event.header[0]] = event.header[1]
            elif event.kind == "headers":
                await self._start(part)
            elif event.kind == "data":
                await self._data(part, event.data)
            else:  # end
                if part.fh is not None:
                    await asyncio.to_thread(part.fh.close)
                    part.fh = None
                    self.done.append(part)
                self.current = None

    async def _start(self, part: Part) -> None:
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
            raise InvalidRequest(f"Invalid file name {raw!r}.") from None
        part.temp, part.fh = await asyncio.to_thread(self.folder.create_temp)
        self.temps.append(part.temp)

    async def _data(self, part: Part, data: bytes) -> None:
        if part.fh is None:
            self.other_bytes += len(data)
            if self.other_bytes > MAX_OTHER_FIELD_BYTES:
                raise TooLarge("Form fields other than files are too large.")
            return
        part.size += len(data)
        self.new_bytes += len(data)
        if part.size > self.max_file:
            raise TooLarge(file_too_large(part.name or "", self.max_file))
        if self.new_bytes > self.remaining:
            raise TooLarge(total_too_large(self.remaining))
        await asyncio.to_thread(part.fh.write, data)

    async def abort(self) -> None:
        for part in [*self.done, self.current]:
            if part is not None and part.fh is not None:
                await asyncio.to_thread(part.fh.close)
        await asyncio.to_thread(self.folder.unlink, self.temps)


def file_too_large(name: str, max_file: int) -> str:
    return (
        f"File {name!r} is larger than the per-file upload limit of {max_file} bytes. "
        "Nothing was uploaded."
    )


def total_too_large(remaining: int) -> str:
    return (
        "These uploads would exceed the thread's total upload limit "
        f"({remaining} bytes left). Nothing was uploaded."
    )
