"""Blocking file operations behind the sandbox's file tools.

Each function takes a :class:`ThreadPaths` and virtual paths, resolves them with
:func:`resolve_virtual` (containment checked) and returns virtual paths. Callers run them
with ``asyncio.to_thread``. Results are bounded: reads stop after ``max_chars``, listings,
globs and greps stop after a fixed number of entries.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path

from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import ThreadPaths, normalize_virtual, resolve_virtual

MAX_LIST_ENTRIES = 1000
MAX_GLOB_RESULTS = 1000
MAX_GREP_FILE_BYTES = 5 * 1024 * 1024
MAX_GREP_LINE_CHARS = 300
_BINARY_SNIFF = 8192


def _open_contained(paths: ThreadPaths, host: Path, flags: int) -> int:
    """``os.open`` then re-check where the descriptor really points.

    The path was checked before; a command running concurrently could swap a folder for a
    symlink in between. The descriptor's real path (``/proc/self/fd``) settles it.
    """
    fd = os.open(host, flags | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        real = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:  # no /proc: the pre-open check stands
        return fd
    root = paths.root.resolve()
    if root not in real.parents:
        os.close(fd)
        raise SandboxError("Access denied: the file moved outside the thread folders.")
    return fd


def _read_text(paths: ThreadPaths, host: Path, errors: str = "replace") -> str:
    fd = _open_contained(paths, host, os.O_RDONLY)
    with open(fd, encoding="utf-8", errors=errors, newline="") as fh:
        return fh.read()


def _virtual(paths: ThreadPaths, host: Path) -> str:
    return paths.to_virtual(host)


def _existing_file(paths: ThreadPaths, path: str) -> tuple[Path, str]:
    host = resolve_virtual(paths, path)
    shown = normalize_virtual(path)
    if not host.exists():
        raise SandboxError(f"File not found: {shown}")
    if host.is_dir():
        raise SandboxError(f"{shown} is a directory, not a file (use ls to list it).")
    return host, shown


def _is_binary(host: Path) -> bool:
    with host.open("rb") as fh:
        return b"\x00" in fh.read(_BINARY_SNIFF)


def read_file(
    paths: ThreadPaths,
    path: str,
    start_line: int | None,
    end_line: int | None,
    max_chars: int,
) -> str:
    host, shown = _existing_file(paths, path)
    if _is_binary(host):
        raise SandboxError(f"{shown} is a binary file; it cannot be read as text.")
    start = 1 if start_line is None else start_line
    if start < 1 or (end_line is not None and end_line < start):
        raise SandboxError("Invalid line range: start_line >= 1 and end_line >= start_line.")
    out: list[str] = []
    size = 0
    fd = _open_contained(paths, host, os.O_RDONLY)
    with open(fd, encoding="utf-8", errors="replace", newline="") as fh:
        for lineno, line in enumerate(fh, start=1):
            if lineno < start:
                continue
            if end_line is not None and lineno > end_line:
                break
            if size + len(line) > max_chars:
                out.append(line[: max(0, max_chars - size)])
                out.append(
                    f"\n[... truncated at {max_chars} characters (stopped in line {lineno}); "
                    "read further with start_line/end_line ...]"
                )
                break
            out.append(line)
            size += len(line)
    return "".join(out)


def write_file(paths: ThreadPaths, path: str, content: str, append: bool) -> None:
    host = resolve_virtual(paths, path)
    shown = normalize_virtual(path)
    if host.is_dir():
        raise SandboxError(f"{shown} is a directory; give a file path.")
    if host == paths.root.resolve() or host.parent == paths.root.resolve():
        raise SandboxError(f"Cannot write {shown}: write inside workspace, uploads or outputs.")
    host.parent.mkdir(parents=True, exist_ok=True)
    # Truncation happens only after the descriptor was checked (no O_TRUNC at open time).
    fd = _open_contained(paths, host, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0))
    with open(fd, "a" if append else "w", encoding="utf-8", newline="") as fh:
        if not append:
            fh.truncate(0)
        fh.write(content)


def str_replace(paths: ThreadPaths, path: str, old: str, new: str, replace_all: bool) -> int:
    host, shown = _existing_file(paths, path)
    if not old:
        raise SandboxError("old must not be empty.")
    if _is_binary(host):
        raise SandboxError(f"{shown} is a binary file; str_replace works on text files.")
    text = _read_text(paths, host, errors="surrogateescape")
    count = text.count(old)
    if count == 0:
        raise SandboxError(f"The text to replace was not found in {shown}; read the file first.")
    if count > 1 and not replace_all:
        raise SandboxError(
            f"The text to replace occurs {count} times in {shown}; include more surrounding "
            "context to make it unique, or set replace_all=true."
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    fd = _open_contained(paths, host, os.O_WRONLY)
    with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
        fh.truncate(0)
        fh.write(updated)
    return count if replace_all else 1


def _existing_dir(paths: ThreadPaths, path: str) -> tuple[Path, str]:
    host = resolve_virtual(paths, path)
    shown = normalize_virtual(path)
    if not host.exists():
        raise SandboxError(f"Directory not found: {shown}")
    if not host.is_dir():
        raise SandboxError(f"{shown} is a file, not a directory.")
    return host, shown


def list_dir(paths: ThreadPaths, path: str, max_depth: int) -> list[str]:
    host, _ = _existing_dir(paths, path)
    max_depth = max(1, max_depth)
    out: list[str] = []

    def walk(folder: Path, depth: int) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if len(out) >= MAX_LIST_ENTRIES:
                return
            entry_path = Path(entry.path)
            is_dir = entry.is_dir(follow_symlinks=False)
            out.append(_virtual(paths, entry_path) + ("/" if is_dir else ""))
            if is_dir and depth < max_depth:
                walk(entry_path, depth + 1)

    walk(host, 1)
    if len(out) >= MAX_LIST_ENTRIES:
        out.append(f"[... listing stopped at {MAX_LIST_ENTRIES} entries ...]")
    return out


def _check_pattern(pattern: str) -> None:
    if not pattern or pattern.startswith("/") or ".." in Path(pattern).parts:
        raise SandboxError(
            "glob patterns are relative to the search folder and may not contain '..' "
            "(e.g. '**/*.py'); pass the folder as path."
        )


def glob(paths: ThreadPaths, pattern: str, path: str | None) -> list[str]:
    _check_pattern(pattern)
    host, _ = _existing_dir(paths, path or "/mnt/user-data/workspace")
    root = paths.root.resolve()
    out: list[str] = []
    for match in host.glob(pattern):
        resolved = match.resolve(strict=False)
        if resolved != root and root not in resolved.parents:
            continue  # a symlink leading out: never report it
        out.append(_virtual(paths, match))
        if len(out) >= MAX_GLOB_RESULTS:
            break
    return sorted(out)


def _walk_files(folder: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            yield Path(dirpath) / name


def grep(
    paths: ThreadPaths,
    pattern: str,
    path: str | None,
    file_glob: str | None,
    max_matches: int,
) -> list[str]:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise SandboxError(f"Invalid regular expression {pattern!r}: {exc}") from None
    host = resolve_virtual(paths, path or "/mnt/user-data/workspace")
    shown = normalize_virtual(path or "/mnt/user-data/workspace")
    if not host.exists():
        raise SandboxError(f"Not found: {shown}")
    root = paths.root.resolve()
    files = [host] if host.is_file() else _walk_files(host)
    out: list[str] = []
    limit = max(1, max_matches)
    for file in files:
        rel = file.relative_to(host).as_posix() if file != host else file.name
        if file_glob and not (
            fnmatch.fnmatch(file.name, file_glob) or fnmatch.fnmatch(rel, file_glob)
        ):
            continue
        try:
            resolved = file.resolve(strict=True)
            if root not in resolved.parents or not resolved.is_file():
                continue
            if resolved.stat().st_size > MAX_GREP_FILE_BYTES or _is_binary(resolved):
                continue
            virtual = _virtual(paths, file)
            with resolved.open("r", encoding="utf-8", errors="replace") as fh:
                for lineno, line in enumerate(fh, start=1):
                    if regex.search(line):
                        text = line.rstrip("\r\n")
                        if len(text) > MAX_GREP_LINE_CHARS:
                            text = text[:MAX_GREP_LINE_CHARS] + "..."
                        out.append(f"{virtual}:{lineno}: {text}")
                        if len(out) >= limit:
                            return out
        except OSError:
            continue
    return out
