"""Read-only folders shown inside the sandbox beside the thread's own (skills at
``/mnt/skills/...``).

A :class:`ReadOnlyMount` maps one virtual folder to a host folder. bwrap binds it read-only;
with ``isolation: none`` commands see the host path (the prefix is rewritten) and nothing
stops a write there, so read-only is enforced only by bwrap and by the file tools, which
serve reads here (every path resolved and contained in the mount, links out refused) and
refuse writes with a clear error.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import regex

from pronghorn.sandbox.errors import PathDeniedError, SandboxError

MAX_ENTRIES = 1000
MAX_GREP_FILE_BYTES = 2 * 1024 * 1024
GREP_TIMEOUT_S = 0.5


@dataclass(frozen=True, slots=True)
class ReadOnlyMount:
    virtual: str  # e.g. /mnt/skills/public/data-analysis
    host: Path


class MountSource(Protocol):
    """Who decides the read-only folders of a user's sandboxes (the skill catalog)."""

    async def mounts_for(self, user_id: str) -> tuple[ReadOnlyMount, ...]: ...


def _norm(path: str) -> str:
    return posixpath.normpath("/" + path.strip().lstrip("/")) if path.strip() else "/"


def find(mounts: Sequence[ReadOnlyMount], path: str | None) -> tuple[ReadOnlyMount, str] | None:
    """The mount a virtual path is in and the path inside it, or None (not a mount path).

    A path above every mount but in their parent (``/mnt/skills``) is refused with a hint."""
    if not path or not path.strip().startswith("/mnt/") or not mounts:
        return None
    norm = _norm(path)
    for mount in mounts:
        if norm == mount.virtual or norm.startswith(mount.virtual + "/"):
            return mount, norm[len(mount.virtual) :].lstrip("/")
    parents = {posixpath.dirname(m.virtual) for m in mounts} | {
        posixpath.dirname(posixpath.dirname(m.virtual)) for m in mounts
    }
    if norm in parents:
        raise SandboxError(
            f"{norm} is a folder of read-only skills; list one skill's folder, e.g. "
            f"{mounts[0].virtual}"
        )
    return None


def read_only_error(path: str) -> PathDeniedError:
    return PathDeniedError(
        f"Access denied: {_norm(path)} is read-only (a skill's folder). Copy what you need "
        "to /mnt/user-data/workspace and change it there."
    )


def _host(mount: ReadOnlyMount, rest: str, shown: str) -> Path:
    root = mount.host.resolve()
    target = (root / rest).resolve() if rest else root
    if target != root and root not in target.parents:
        raise PathDeniedError(f"Access denied: {shown} leads outside the skill's folder")
    return target


def read_text(mount: ReadOnlyMount, rest: str, shown: str, max_chars: int) -> str:
    target = _host(mount, rest, shown)
    if not target.is_file():
        raise SandboxError(f"File not found: {shown}")
    with open(target, "rb") as fh:
        data = fh.read(max_chars * 4 + 4)
    if b"\x00" in data[:8192]:
        raise SandboxError(f"{shown} is a binary file")
    return data.decode("utf-8", "replace")


def read_lines(
    mount: ReadOnlyMount,
    rest: str,
    shown: str,
    start: int | None,
    end: int | None,
    max_chars: int,
) -> str:
    text = read_text(mount, rest, shown, max_chars)
    lines = text.splitlines(keepends=True)
    first = max(1, start or 1)
    chosen = "".join(lines[first - 1 : end if end else None])
    if len(chosen) > max_chars:
        chosen = chosen[:max_chars] + f"\n[... truncated at {max_chars} characters ...]"
    return chosen


def _walk(mount: ReadOnlyMount, rest: str, shown: str, depth: int) -> list[tuple[str, bool]]:
    """(virtual path, is_dir) below a folder, ``depth`` levels, links out skipped."""
    base = _host(mount, rest, shown)
    if not base.is_dir():
        raise SandboxError(f"Directory not found: {shown}")
    root = mount.host.resolve()
    out: list[tuple[str, bool]] = []

    def visit(folder: Path, virtual: str, level: int) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if len(out) >= MAX_ENTRIES:
                return
            real = Path(entry.path).resolve()
            if real != root and root not in real.parents:
                continue
            is_dir = entry.is_dir()
            child = f"{virtual}/{entry.name}"
            out.append((child, is_dir))
            if is_dir and level < depth:
                visit(Path(entry.path), child, level + 1)

    visit(base, shown.rstrip("/"), 1)
    return out


def list_dir(mount: ReadOnlyMount, rest: str, shown: str, max_depth: int) -> list[str]:
    return [v + ("/" if d else "") for v, d in _walk(mount, rest, shown, max(1, max_depth))]


def glob(mount: ReadOnlyMount, rest: str, shown: str, pattern: str) -> list[str]:
    if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
        raise SandboxError(
            "glob patterns are relative to the search folder and may not contain '..'"
        )
    base = shown.rstrip("/") + "/"
    hits: list[str] = []
    for virtual, is_dir in _walk(mount, rest, shown, 32):
        rel = virtual[len(base) :]
        if not is_dir and (
            fnmatch.fnmatchcase(rel, pattern)
            or (pattern.startswith("**/") and fnmatch.fnmatchcase(rel, pattern[3:]))
        ):
            hits.append(virtual)
    return sorted(hits)


def grep(
    mount: ReadOnlyMount,
    rest: str,
    shown: str,
    pattern: str,
    name_glob: str | None,
    max_matches: int,
) -> list[str]:
    try:
        rx = regex.compile(pattern)
    except regex.error as exc:
        raise SandboxError(f"Invalid regular expression: {exc}") from None
    target = _host(mount, rest, shown)
    files = [(shown, target)] if target.is_file() else []
    if not files:
        for virtual, is_dir in _walk(mount, rest, shown, 32):
            if not is_dir:
                inside = virtual[len(mount.virtual) :].lstrip("/")
                files.append((virtual, _host(mount, inside, virtual)))
    hits: list[str] = []
    for virtual, host in files:
        if name_glob and not fnmatch.fnmatchcase(posixpath.basename(virtual), name_glob):
            continue
        if host.stat().st_size > MAX_GREP_FILE_BYTES:
            continue
        with open(host, "rb") as fh:
            data = fh.read()
        if b"\x00" in data[:8192]:
            continue
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            try:
                found = rx.search(line, timeout=GREP_TIMEOUT_S)
            except TimeoutError:
                raise SandboxError("The regular expression is too slow; simplify it.") from None
            if found:
                hits.append(f"{virtual}:{n}: {line[:300]}")
                if len(hits) >= max_matches:
                    return hits
    return hits


def shown(path: str) -> str:
    """The normalised virtual path, as messages show it."""
    return _norm(path)
