"""What changed in a thread's folders between two moments: snapshots and their comparison.

A snapshot walks the given roots (never following a link, never leaving a root) and keeps,
per file, its size, mtime and kind, plus the text of small text files (so a later diff can
show what was there) and their sha256. Comparing two snapshots lists the files created,
modified or deleted, with unified diffs of text files, all within fixed bounds (files
scanned, files listed, bytes per diff, diff bytes in total). Files whose names look like
secrets never get a diff. Blocking: call these in a worker thread.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

MAX_SCANNED_FILES = 2000
MAX_FILES = 200
MAX_FILE_BYTES_FOR_DIFF = 256 * 1024
MAX_TOTAL_DIFF_BYTES = 1024 * 1024
MAX_KEPT_TEXT_BYTES = 8 * 1024 * 1024  # text kept from the first snapshot, all files together
MAX_HASH_BYTES = 16 * 1024 * 1024
MAX_READ_BYTES = 32 * 1024 * 1024  # read per snapshot; past it, files are compared by stat
SENSITIVE_NAMES = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    ".netrc",
    ".pgpass",
    "*credentials*",
    "*secret*",
    "*.keystore",
)

LIMITS = {
    "max_files": MAX_FILES,
    "max_scanned_files": MAX_SCANNED_FILES,
    "max_file_bytes_for_diff": MAX_FILE_BYTES_FOR_DIFF,
    "max_total_diff_bytes": MAX_TOTAL_DIFF_BYTES,
}


@dataclass(frozen=True, slots=True)
class FileState:
    size: int
    mtime_ns: int
    inode: int
    symlink_target: str | None = None  # a symlink (never followed)
    text: str | None = None  # kept text (small text files, first snapshot)
    binary: bool = False
    sha256: str | None = None


@dataclass(slots=True)
class Snapshot:
    files: dict[str, FileState] = field(default_factory=dict[str, FileState])
    truncated: bool = False  # more files than MAX_SCANNED_FILES
    kept_bytes: int = 0
    read_bytes: int = 0


def is_sensitive(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return any(fnmatch.fnmatch(name, pattern) for pattern in SENSITIVE_NAMES)


def _read_small(path: Path, size: int) -> bytes | None:
    """The bytes of a regular file up to MAX_FILE_BYTES_FOR_DIFF, never through a link."""
    if size > MAX_FILE_BYTES_FOR_DIFF:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(MAX_FILE_BYTES_FOR_DIFF + 1)


def _sha256(path: Path, size: int) -> str | None:
    if size > MAX_HASH_BYTES:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _decode(data: bytes) -> str | None:
    """Text, or None for binary content (a NUL byte, or not UTF-8)."""
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _state(path: Path, info: os.stat_result, snap: Snapshot, keep_text: bool) -> FileState:
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
        return FileState(info.st_size, info.st_mtime_ns, info.st_ino, symlink_target=target)
    if snap.read_bytes + info.st_size > MAX_READ_BYTES:  # compared by size/mtime/inode
        return FileState(info.st_size, info.st_mtime_ns, info.st_ino)
    data = _read_small(path, info.st_size)
    if data is None:
        return FileState(info.st_size, info.st_mtime_ns, info.st_ino)
    snap.read_bytes += len(data)
    text = _decode(data)
    kept = None
    if keep_text and text is not None and snap.kept_bytes + len(data) <= MAX_KEPT_TEXT_BYTES:
        kept = text
        snap.kept_bytes += len(data)
    sha = hashlib.sha256(data).hexdigest()
    return FileState(
        info.st_size, info.st_mtime_ns, info.st_ino, text=kept, binary=text is None, sha256=sha
    )


def snapshot(roots: dict[str, Path], previous: Snapshot | None = None) -> Snapshot:
    """The files under each root (`{name: host folder}`), keyed `name/relative/path`. A root
    that is missing, or is not a real folder (a link), has no files. Given the `previous`
    snapshot, a file whose size, mtime and inode are the same is not read again, and no
    text is kept (the first snapshot keeps it, for the diffs)."""
    snap = Snapshot()
    keep_text = previous is None
    for name, root in roots.items():
        try:
            if not stat.S_ISDIR(os.lstat(root).st_mode):
                continue
        except OSError:
            continue
        for folder, dirs, files in os.walk(root, followlinks=False):
            dirs.sort()
            for entry in sorted(files) + [d for d in dirs if os.path.islink(Path(folder, d))]:
                if len(snap.files) >= MAX_SCANNED_FILES:
                    snap.truncated = True
                    return snap
                path = Path(folder, entry)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                    continue
                key = f"{name}/{path.relative_to(root).as_posix()}"
                old = previous.files.get(key) if previous is not None else None
                same = old is not None and (old.size, old.mtime_ns, old.inode) == (
                    info.st_size,
                    info.st_mtime_ns,
                    info.st_ino,
                )
                snap.files[key] = (
                    old if same and old is not None else _state(path, info, snap, keep_text)
                )
    return snap


def _unchanged(before: FileState, after: FileState) -> bool:
    if before.symlink_target is not None or after.symlink_target is not None:
        return before.symlink_target == after.symlink_target
    if before.sha256 is not None and after.sha256 is not None:
        return before.sha256 == after.sha256
    return (before.size, before.mtime_ns, before.inode) == (after.size, after.mtime_ns, after.inode)


def _diff(path: str, old: str, new: str) -> tuple[str, int, int]:
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )
    adds = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    dels = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    text = "".join(
        ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines
    )
    return text, adds, dels


@dataclass(slots=True)
class _Budget:
    left: int = MAX_TOTAL_DIFF_BYTES


ChangeStatus = Literal["created", "modified", "deleted"]
"""How a file changed between two snapshots."""
FileStatus = Literal["created", "modified", "deleted", "symlink_created"]
"""A file's status in the answer: a created symlink is told apart."""
NoDiffReason = Literal["binary", "large", "sensitive", "truncated", "symlink"]
"""Why a changed file's diff is not in the answer."""


class FileChange(TypedDict):
    """One changed file of DeerFlow's workspace-changes answer (the gateway's
    `WorkspaceFileChange` is its API model: `sandbox` may not import `gateway`)."""

    path: str
    root: str
    status: FileStatus
    binary: bool
    sensitive: bool
    size_before: int | None
    size_after: int | None
    sha256_before: str | None
    sha256_after: str | None
    diff: str
    diff_truncated: bool
    diff_unavailable_reason: NoDiffReason | None
    additions: int
    deletions: int
    symlink: bool
    symlink_target_before: str | None
    symlink_target_after: str | None


class ChangeSummary(TypedDict):
    created: int
    modified: int
    deleted: int
    symlink_created: int
    additions: int
    deletions: int
    truncated: bool


class WorkspaceChanges(TypedDict):
    """DeerFlow's workspace-changes payload, as stored in a column and served."""

    version: int
    summary: ChangeSummary
    files: list[FileChange]
    limits: dict[str, int]


def _entry(
    key: str,
    status: ChangeStatus,
    before: FileState | None,
    after: FileState | None,
    host: Path | None,
    budget: _Budget,
) -> FileChange:
    root, _, rel = key.partition("/")
    path = f"/mnt/user-data/{root}/{rel}"
    sensitive = is_sensitive(rel)
    link = (before is not None and before.symlink_target is not None) or (
        after is not None and after.symlink_target is not None
    )
    sha_after = after.sha256 if after is not None else None
    if after is not None and sha_after is None and not link and host is not None:
        sha_after = _sha256(host, after.size)
    binary = bool((before and before.binary) or (after and after.binary))
    item: FileChange = {
        "path": path,
        "root": root,
        "status": "symlink_created" if link and status == "created" else status,
        "binary": binary,
        "sensitive": sensitive,
        "size_before": before.size if before is not None else None,
        "size_after": after.size if after is not None else None,
        "sha256_before": before.sha256 if before is not None else None,
        "sha256_after": sha_after,
        "diff": "",
        "diff_truncated": False,
        "diff_unavailable_reason": None,
        "additions": 0,
        "deletions": 0,
        "symlink": link,
        "symlink_target_before": before.symlink_target if before is not None else None,
        "symlink_target_after": after.symlink_target if after is not None else None,
    }
    reason = _no_diff_reason(item, before, after)
    if reason is None:
        old = before.text if before is not None else ""
        new: str | None = ""
        if after is not None and host is not None:
            data = _read_small(host, after.size)
            new = _decode(data) if data is not None else None
        if old is None:  # its text was not kept (the first snapshot's budget ran out)
            reason = "truncated"
        elif new is None:  # it changed again meanwhile, into something larger or binary
            reason = "large"
        else:
            text, adds, dels = _diff(rel, old, new)
            item["additions"], item["deletions"] = adds, dels
            if len(text.encode("utf-8")) > budget.left:
                item["diff_truncated"] = True
                reason = "truncated"
            else:
                budget.left -= len(text.encode("utf-8"))
                item["diff"] = text
    item["diff_unavailable_reason"] = reason
    return item


def _no_diff_reason(
    item: FileChange, before: FileState | None, after: FileState | None
) -> NoDiffReason | None:
    if item["symlink"]:
        return "symlink"
    if item["sensitive"]:
        return "sensitive"
    if item["binary"]:
        return "binary"
    for side in (before, after):
        if side is not None and side.size > MAX_FILE_BYTES_FOR_DIFF:
            return "large"
    return None


def compare(before: Snapshot, after: Snapshot, roots: dict[str, Path]) -> WorkspaceChanges:
    """DeerFlow's workspace-changes payload: `{version, summary, files, limits}`. When a
    snapshot stopped at MAX_SCANNED_FILES, which files are new or gone is unknown: only
    files modified in both are listed (and `summary.truncated` says so)."""
    changed: list[tuple[str, ChangeStatus]] = []
    partial = before.truncated or after.truncated
    keys = (
        before.files.keys() & after.files.keys()
        if partial
        else before.files.keys() | after.files.keys()
    )
    for key in sorted(keys):
        old, new = before.files.get(key), after.files.get(key)
        if old is None:
            changed.append((key, "created"))
        elif new is None:
            changed.append((key, "deleted"))
        elif not _unchanged(old, new):
            changed.append((key, "modified"))
    budget = _Budget()
    files: list[FileChange] = []
    for key, status in changed[:MAX_FILES]:
        root, _, rel = key.partition("/")
        host = roots[root] / rel if status != "deleted" else None
        entry = _entry(key, status, before.files.get(key), after.files.get(key), host, budget)
        files.append(entry)
    summary: ChangeSummary = {
        "created": sum(1 for f in files if f["status"] == "created"),
        "modified": sum(1 for f in files if f["status"] == "modified"),
        "deleted": sum(1 for f in files if f["status"] == "deleted"),
        "symlink_created": sum(1 for f in files if f["status"] == "symlink_created"),
        "additions": sum(f["additions"] for f in files),
        "deletions": sum(f["deletions"] for f in files),
        "truncated": len(changed) > MAX_FILES or before.truncated or after.truncated,
    }
    return {"version": 1, "summary": summary, "files": files, "limits": dict(LIMITS)}
