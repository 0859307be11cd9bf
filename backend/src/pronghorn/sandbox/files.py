"""Blocking file operations behind the sandbox's file tools.

Each function takes a :class:`ThreadPaths` and virtual paths and returns virtual paths.
Every file and folder is opened once, through :mod:`pronghorn.sandbox.safe_open` (walked
from the thread root without following links out of it, non-blocking, regular files
only), and used through that descriptor afterwards. Callers run these functions with
``asyncio.to_thread``.

Work is bounded so one call cannot wedge the gateway: reads keep at most about
``max_chars`` in memory whatever the line length, listings, globs and greps stop after a
fixed number of entries, scans stop after :data:`SCAN_DEADLINE_S`, and regex search uses
the ``regex`` engine with a timeout (it releases the GIL while matching, so the event loop
keeps running during a slow match): each search may use :data:`GREP_SEARCH_CPU_S` of CPU
time, the whole call :data:`GREP_TIMEOUT_S` of wall time.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

import regex

from pronghorn.sandbox import safe_open
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.lines import ScanDeadline, iter_lines
from pronghorn.sandbox.paths import ThreadPaths, normalize_virtual

MAX_LIST_ENTRIES = 1000
MAX_GLOB_RESULTS = 1000
MAX_WALK_ENTRIES = 50_000
MAX_WALK_DEPTH = 64
MAX_GREP_FILE_BYTES = 5 * 1024 * 1024
MAX_GREP_LINE_BYTES = 64 * 1024
MAX_GREP_LINE_CHARS = 300
MAX_EDIT_BYTES = 10 * 1024 * 1024
GREP_TIMEOUT_S = 5.0
# The regex engine's timeout counts the process's CPU time (``clock()``), not wall time:
# each search gets at most this much, and the wall-clock budget is checked between lines.
GREP_SEARCH_CPU_S = 0.5
SCAN_DEADLINE_S = 10.0
_BINARY_SNIFF = 8192


# --- opening ----------------------------------------------------------------------------------


def _open_file(paths: ThreadPaths, path: str, flags: int = os.O_RDONLY) -> safe_open.Opened:
    shown = normalize_virtual(path)
    try:
        return safe_open.open_file(paths, shown, flags)
    except safe_open.MissingPathError:
        raise SandboxError(f"File not found: {shown}") from None


def _open_dir(paths: ThreadPaths, path: str) -> safe_open.Opened:
    shown = normalize_virtual(path)
    try:
        return safe_open.open_dir(paths, shown)
    except safe_open.MissingPathError:
        raise SandboxError(f"Directory not found: {shown}") from None


def _is_binary(fd: int) -> bool:
    return b"\x00" in os.pread(fd, _BINARY_SNIFF, 0)


def _read_all(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got <= size:
        chunk = os.read(fd, min(1024 * 1024, size + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# --- read, write, edit ------------------------------------------------------------------------


def read_file(
    paths: ThreadPaths,
    path: str,
    start_line: int | None,
    end_line: int | None,
    max_chars: int,
) -> str:
    start = 1 if start_line is None else start_line
    if start < 1 or (end_line is not None and end_line < start):
        raise SandboxError("Invalid line range: start_line >= 1 and end_line >= start_line.")
    with _open_file(paths, path) as opened:
        shown = normalize_virtual(path)
        if _is_binary(opened.fd):
            raise SandboxError(f"{shown} is a binary file; it cannot be read as text.")
        # A character is at most 4 UTF-8 bytes: this many bytes always cover max_chars.
        line_cap = 4 * max_chars + 4
        out: list[str] = []
        size = 0
        deadline = time.monotonic() + SCAN_DEADLINE_S
        try:
            for lineno, head, _ in iter_lines(
                opened.fd, max_line_bytes=line_cap, first=start, deadline=deadline
            ):
                if end_line is not None and lineno > end_line:
                    break
                line = head.decode("utf-8", "replace")
                if size + len(line) > max_chars:
                    out.append(line[: max(0, max_chars - size)])
                    out.append(
                        f"\n[... truncated at {max_chars} characters (stopped in line "
                        f"{lineno}); read further with start_line/end_line ...]"
                    )
                    break
                out.append(line)
                size += len(line)
        except ScanDeadline:
            raise SandboxError(
                f"Reading {shown} took longer than {SCAN_DEADLINE_S:.0f} s and was stopped; "
                "read a range nearer the start of the file, or use bash (head, tail, sed)."
            ) from None
    return "".join(out)


def write_file(paths: ThreadPaths, path: str, content: str, append: bool) -> None:
    shown = normalize_virtual(path)
    if len(PurePosixPath(shown).parts) <= 3:  # "/", "mnt", "user-data"
        raise SandboxError(f"Cannot write {shown}: write inside workspace, uploads or outputs.")
    data = content.encode("utf-8", "surrogateescape")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0)
    try:
        opened = safe_open.open_file(paths, shown, flags, create_dirs=True)
    except safe_open.NotRegularFileError as exc:
        raise SandboxError(f"{exc} Give a file path.") from None
    with opened:
        # Truncate only once the descriptor is known to be a regular file inside the thread.
        if not append:
            os.ftruncate(opened.fd, 0)
        _write_all(opened.fd, data)


def str_replace(paths: ThreadPaths, path: str, old: str, new: str, replace_all: bool) -> int:
    shown = normalize_virtual(path)
    if not old:
        raise SandboxError("old must not be empty.")
    with _open_file(paths, path, os.O_RDWR) as opened:
        if opened.info.st_size > MAX_EDIT_BYTES:
            raise SandboxError(
                f"{shown} is {opened.info.st_size} bytes; str_replace edits files up to "
                f"{MAX_EDIT_BYTES} bytes (use bash, e.g. sed, for bigger files)."
            )
        if _is_binary(opened.fd):
            raise SandboxError(f"{shown} is a binary file; str_replace works on text files.")
        raw = _read_all(opened.fd, MAX_EDIT_BYTES)
        if len(raw) > MAX_EDIT_BYTES:
            raise SandboxError(f"{shown} grew past {MAX_EDIT_BYTES} bytes while being read.")
        text = raw.decode("utf-8", "surrogateescape")
        count = text.count(old)
        if count == 0:
            raise SandboxError(
                f"The text to replace was not found in {shown}; read the file first."
            )
        if count > 1 and not replace_all:
            raise SandboxError(
                f"The text to replace occurs {count} times in {shown}; include more "
                "surrounding context to make it unique, or set replace_all=true."
            )
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        os.lseek(opened.fd, 0, os.SEEK_SET)
        os.ftruncate(opened.fd, 0)
        _write_all(opened.fd, updated.encode("utf-8", "surrogateescape"))
    return count if replace_all else 1


# --- walking folders --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    dir_fd: int  # the folder holding the entry (open only while the walk yields it)
    name: str
    virtual: str
    rel: tuple[str, ...]  # components relative to the walk's start
    is_dir: bool
    is_link: bool


class _Budget:
    """Entries visited and time spent by one walk; ``stopped`` names the limit hit."""

    def __init__(self, entries: int = MAX_WALK_ENTRIES, seconds: float = SCAN_DEADLINE_S):
        self.left = entries
        self.deadline = time.monotonic() + seconds
        self.stopped: str | None = None

    def spend(self) -> bool:
        self.left -= 1
        if self.left < 0:
            self.stopped = f"after {MAX_WALK_ENTRIES} entries"
        elif time.monotonic() > self.deadline:
            self.stopped = f"after {SCAN_DEADLINE_S:.0f} s"
        return self.stopped is None


def _walk(
    dir_fd: int, virtual: str, max_depth: int, budget: _Budget, rel: tuple[str, ...] = ()
) -> Iterator[_Entry]:
    """Every entry below an open folder, pre-order, sorted by name, links never followed."""
    names: list[tuple[str, bool, bool]] = []
    with contextlib.suppress(OSError), os.scandir(dir_fd) as it:
        for entry in it:
            if not budget.spend():
                break
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            names.append((entry.name, is_dir, is_link))
    for name, is_dir, is_link in sorted(names):
        child = (*rel, name)
        entry_virtual = f"{virtual}/{name}"
        yield _Entry(dir_fd, name, entry_virtual, child, is_dir, is_link)
        if budget.stopped is not None:
            return
        if is_dir and len(child) < max_depth:
            try:
                sub = os.open(name, safe_open.DIR_FLAGS, dir_fd=dir_fd)
            except OSError:
                continue  # vanished or swapped for a link meanwhile: skip it
            try:
                yield from _walk(sub, entry_virtual, max_depth, budget, child)
            finally:
                os.close(sub)
            if budget.stopped is not None:
                return


def list_dir(paths: ThreadPaths, path: str, max_depth: int) -> list[str]:
    with _open_dir(paths, path) as opened:
        max_depth = min(max(1, max_depth), MAX_WALK_DEPTH)
        out: list[str] = []
        budget = _Budget()
        for entry in _walk(opened.fd, opened.virtual, max_depth, budget):
            if len(out) >= MAX_LIST_ENTRIES:
                break
            out.append(entry.virtual + ("/" if entry.is_dir else ""))
    if len(out) >= MAX_LIST_ENTRIES:
        out.append(f"[... listing stopped at {MAX_LIST_ENTRIES} entries ...]")
    elif budget.stopped:
        out.append(f"[... listing stopped {budget.stopped} ...]")
    return out


def _check_pattern(pattern: str) -> tuple[str, ...]:
    parts = PurePosixPath(pattern).parts if pattern else ()
    if not pattern or pattern.startswith("/") or ".." in parts:
        raise SandboxError(
            "glob patterns are relative to the search folder and may not contain '..' "
            "(e.g. '**/*.py'); pass the folder as path."
        )
    return tuple(p for p in parts if p != ".")


def _glob_matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """``pathlib``-style matching: ``**`` is any number of folders, ``*`` stays in one name."""

    @cache
    def match(i: int, j: int) -> bool:
        if i == len(pattern):
            return j == len(path)
        if pattern[i] == "**":
            return any(match(i + 1, k) for k in range(j, len(path) + 1))
        return j < len(path) and fnmatch.fnmatchcase(path[j], pattern[i]) and match(i + 1, j + 1)

    return match(0, 0)


def _link_stays_inside(paths: ThreadPaths, virtual: str) -> bool:
    try:
        safe_open.real_path(paths, virtual)
    except SandboxError:
        return False
    return True


def glob(paths: ThreadPaths, pattern: str, path: str | None) -> list[str]:
    parts = _check_pattern(pattern)
    depth = MAX_WALK_DEPTH if "**" in parts else len(parts)
    out: list[str] = []
    budget = _Budget()
    with _open_dir(paths, path or "/mnt/user-data/workspace") as opened:
        for entry in _walk(opened.fd, opened.virtual, depth, budget):
            if not _glob_matches(parts, entry.rel):
                continue
            if entry.is_link and not _link_stays_inside(paths, entry.virtual):
                continue  # a symlink leading out: never report it
            out.append(entry.virtual)
            if len(out) >= MAX_GLOB_RESULTS:
                break
    out.sort()
    if budget.stopped:
        out.append(f"[... search stopped {budget.stopped}; narrow the pattern or path ...]")
    return out


# --- grep -------------------------------------------------------------------------------------


class _GrepTimeout(Exception):
    """``str(exc)`` says which limit stopped the search."""


def _grep_fd(
    fd: int,
    virtual: str,
    compiled: regex.Pattern[str],
    deadline: float,
    out: list[str],
    limit: int,
) -> None:
    info = os.fstat(fd)
    if info.st_size > MAX_GREP_FILE_BYTES or _is_binary(fd):
        return
    try:
        for lineno, head, _ in iter_lines(
            fd, max_line_bytes=MAX_GREP_LINE_BYTES, deadline=deadline
        ):
            line = head.decode("utf-8", "replace").rstrip("\r\n")
            left = deadline - time.monotonic()
            if left <= 0:
                raise _GrepTimeout("it ran out of time")
            try:
                hit = compiled.search(line, timeout=min(left, GREP_SEARCH_CPU_S), concurrent=True)
            except TimeoutError:
                raise _GrepTimeout(f"matching line {lineno} took too long") from None
            if hit is None:
                continue
            text = line if len(line) <= MAX_GREP_LINE_CHARS else line[:MAX_GREP_LINE_CHARS] + "..."
            out.append(f"{virtual}:{lineno}: {text}")
            if len(out) >= limit:
                return
    except ScanDeadline:
        raise _GrepTimeout("it ran out of time") from None


def grep(
    paths: ThreadPaths,
    pattern: str,
    path: str | None,
    file_glob: str | None,
    max_matches: int,
    timeout_s: float = GREP_TIMEOUT_S,
) -> list[str]:
    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError) as exc:
        raise SandboxError(f"Invalid regular expression {pattern!r}: {exc}") from None
    shown = normalize_virtual(path or "/mnt/user-data/workspace")
    try:
        opened = safe_open.open_file_or_dir(paths, shown)
    except safe_open.MissingPathError:
        raise SandboxError(f"Not found: {shown}") from None
    out: list[str] = []
    limit = max(1, max_matches)
    deadline = time.monotonic() + timeout_s
    budget = _Budget()
    where = shown
    try:
        with opened:
            if stat.S_ISREG(opened.info.st_mode):
                _grep_fd(opened.fd, opened.virtual, compiled, deadline, out, limit)
                return out
            for entry in _walk(opened.fd, opened.virtual, MAX_WALK_DEPTH, budget):
                if entry.is_dir or entry.is_link:
                    continue
                if file_glob and not (
                    fnmatch.fnmatch(entry.name, file_glob)
                    or fnmatch.fnmatch("/".join(entry.rel), file_glob)
                ):
                    continue
                file = safe_open.open_entry(entry.dir_fd, entry.name)
                if file is None:
                    continue  # not a regular file (FIFO, socket...) or gone
                where = entry.virtual
                with file:
                    _grep_fd(file.fd, entry.virtual, compiled, deadline, out, limit)
                if len(out) >= limit:
                    return out
    except _GrepTimeout as exc:
        note = (
            f"grep was stopped: {exc} (in {where}; the limit is {timeout_s:g} s per call). "
            "Patterns with nested repetition such as (a+)+ can take exponential time: "
            "simplify the pattern, or narrow path/glob."
        )
        if not out:
            raise SandboxError(note) from None
        out.append(f"[... {note} ...]")
        return out
    if budget.stopped:
        out.append(f"[... search stopped {budget.stopped}; narrow path or glob ...]")
    return out
