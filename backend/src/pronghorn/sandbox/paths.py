"""Per-thread folders and the mapping between virtual and host paths.

The agent sees ``/mnt/user-data/{workspace,uploads,outputs}``. On the host they live at
``<data_dir>/users/<user_id>/threads/<thread_id>/{workspace,uploads,outputs}``. Every path
the model names is first normalised by :func:`normalize_virtual`, which refuses anything
that would leave the thread's folders (``..``, absolute host paths, ``~``). Files are then
opened through :mod:`pronghorn.sandbox.safe_open` (once, from a root descriptor, never
following links out); :func:`resolve_virtual` resolves by name and is for display only.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import posixpath
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from pronghorn.sandbox.errors import PathDeniedError

VIRTUAL_ROOT = "/mnt/user-data"
FOLDERS = ("workspace", "uploads", "outputs")
VIRTUAL_WORKSPACE = f"{VIRTUAL_ROOT}/workspace"
VIRTUAL_UPLOADS = f"{VIRTUAL_ROOT}/uploads"
VIRTUAL_OUTPUTS = f"{VIRTUAL_ROOT}/outputs"

_USER_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_THREAD_ID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def validate_user_id(user_id: object) -> str:
    """Return ``user_id`` if it is a safe folder name, else raise ``ValueError`` (anything
    may come in: the id may come from a token's claims or a request)."""
    if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id) or user_id in (".", ".."):
        raise ValueError(f"invalid user id {user_id!r}: expected [A-Za-z0-9_.-]{{1,64}}")
    return user_id


def user_folder(owner_id: str | None) -> str:
    """The folder name under ``users/`` of an owner: the owner id itself when it is a safe
    folder name (local users' ids, "local"), else a stable digest of it (a custom auth
    identity such as an e-mail address or an issuer URL)."""
    if owner_id is None:
        return LEGACY_USER_FOLDER
    if _USER_ID.fullmatch(owner_id) and owner_id not in (".", ".."):
        return owner_id
    return "u-" + hashlib.sha256(owner_id.encode("utf-8")).hexdigest()[:40]


LEGACY_USER_FOLDER = "default"
"""Where every thread's folders lived before threads had owners (all were "local"'s)."""


def adopt_legacy_folder(data_dir: str | Path, owner_id: str = "local") -> bool:
    """Move the folders of the one user before owners (``users/default``) to the folder of
    the owner they were migrated to, once; True if it moved them (blocking: run it in a
    worker thread)."""
    base = Path(data_dir).expanduser().resolve() / "users"
    legacy, target = base / LEGACY_USER_FOLDER, base / user_folder(owner_id)
    if legacy == target or not legacy.is_dir() or target.exists():
        return False
    legacy.rename(target)
    return True


def validate_thread_id(thread_id: object) -> str:
    """Return the canonical (lower-case) UUID string, else raise ``ValueError`` (anything
    may come in: the id may come from a URL or a request body)."""
    if not isinstance(thread_id, str) or not _THREAD_ID.fullmatch(thread_id):
        raise ValueError(f"invalid thread id {thread_id!r}: expected a UUID string")
    return thread_id.lower()


def thread_root(data_dir: str | Path, user_id: str, thread_id: str) -> Path:
    """Host folder of one thread (ids validated; ``data_dir`` made absolute)."""
    return thread_root_under(Path(data_dir).expanduser().resolve(), user_id, thread_id)


def thread_root_under(base: Path, user_id: str, thread_id: str) -> Path:
    """Host folder of one thread under ``base``, a data dir already made absolute and
    resolved (ids validated; no file system access, unlike :func:`thread_root`)."""
    return base / "users" / validate_user_id(user_id) / "threads" / validate_thread_id(thread_id)


@dataclass(frozen=True, slots=True)
class ThreadPaths:
    """The host folders of one (user, thread). Build it with :meth:`for_thread`."""

    user_id: str
    thread_id: str
    root: Path
    workspace: Path
    uploads: Path
    outputs: Path

    @classmethod
    def for_thread(cls, data_dir: str | Path, user_id: str, thread_id: str) -> ThreadPaths:
        return cls.under(Path(data_dir).expanduser().resolve(), user_id, thread_id)

    @classmethod
    def under(cls, base: Path, user_id: str, thread_id: str) -> ThreadPaths:
        """The folders under ``base``, a data dir already made absolute and resolved."""
        root = thread_root_under(base, user_id, thread_id)
        return cls(
            user_id=user_id,
            thread_id=validate_thread_id(thread_id),
            root=root,
            workspace=root / "workspace",
            uploads=root / "uploads",
            outputs=root / "outputs",
        )

    def ensure(self) -> None:
        """Create the three folders (blocking; call via ``asyncio.to_thread``).

        They are created relative to a descriptor of the root, so a folder that a command
        replaced by a symlink is left alone (never followed, never an error here); the
        file operations refuse it later (see ``safe_open``).
        """
        self.root.mkdir(parents=True, exist_ok=True, mode=0o770)
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            for folder in FOLDERS:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, 0o770, dir_fd=fd)
        finally:
            os.close(fd)

    def resolve_virtual(self, virtual_path: str) -> Path:
        return resolve_virtual(self, virtual_path)

    def to_virtual(self, host_path: str | Path) -> str:
        return to_virtual(self, host_path)


def _deny(shown: str, why: str) -> PathDeniedError:
    return PathDeniedError(
        f"Access denied: {shown!r} {why}. Only paths under {VIRTUAL_ROOT}/workspace, "
        f"{VIRTUAL_ROOT}/uploads and {VIRTUAL_ROOT}/outputs are available "
        "(relative paths are taken relative to the workspace)."
    )


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def normalize_virtual(virtual_path: object) -> str:
    """Absolute, normalised virtual path for ``virtual_path`` (relative → under workspace).

    Raises :class:`PathDeniedError` when the result is not under ``/mnt/user-data``.
    Anything may come in: a path is often a model's tool argument, untyped JSON.
    """
    if not isinstance(virtual_path, str) or not virtual_path.strip():
        raise PathDeniedError("Empty path: give a path such as /mnt/user-data/workspace/file.txt.")
    if "\x00" in virtual_path:
        raise _deny(virtual_path.replace("\x00", "\\0"), "contains a NUL byte")
    raw = virtual_path.strip()
    if raw.startswith("~"):
        raise _deny(raw, "uses '~'")
    joined = raw if raw.startswith("/") else posixpath.join(VIRTUAL_WORKSPACE, raw)
    norm = posixpath.normpath(joined)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    if norm != VIRTUAL_ROOT and not norm.startswith(VIRTUAL_ROOT + "/"):
        if raw.startswith("/") and ".." not in raw.split("/"):
            raise _deny(raw, "is outside /mnt/user-data")
        raise _deny(raw, "escapes /mnt/user-data")
    rest = norm[len(VIRTUAL_ROOT) :].lstrip("/")
    if rest and rest.split("/", 1)[0] not in FOLDERS:
        raise _deny(raw, "is not in one of the thread folders")
    return norm


def resolve_virtual(paths: ThreadPaths, virtual_path: str) -> Path:
    """Map a virtual (or workspace-relative) path to the host path, fully resolved.

    Symlinks are resolved (``strict=False``, so the target need not exist) and the result
    must stay inside the thread root; otherwise :class:`PathDeniedError` is raised.
    """
    norm = normalize_virtual(virtual_path)
    rest = norm[len(VIRTUAL_ROOT) :].lstrip("/")
    host = paths.root / rest if rest else paths.root
    root = paths.root.resolve()
    try:
        resolved = host.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loop
        raise _deny(virtual_path, f"cannot be resolved ({type(exc).__name__})") from None
    if not _is_within(resolved, root):
        raise _deny(virtual_path, "leads outside the thread folders (symlink)")
    return resolved


def to_virtual(paths: ThreadPaths, host_path: str | Path) -> str:
    """The virtual path of a host path inside the thread root (for presenting files)."""
    root = paths.root.resolve()
    p = Path(os.path.abspath(host_path))
    if not _is_within(p, root):
        p = p.resolve(strict=False)
    if not _is_within(p, root):
        raise PathDeniedError("Access denied: that file is outside the thread folders.")
    rel = p.relative_to(root).as_posix()
    return VIRTUAL_ROOT if rel == "." else f"{VIRTUAL_ROOT}/{rel}"


async def delete_thread_dirs(data_dir: str | Path, user_id: str, thread_id: str) -> bool:
    """Delete every file of a thread. Returns True when something was removed.

    ``shutil.rmtree`` never follows symlinks, so a link inside the thread cannot make this
    delete anything outside it.
    """
    root = thread_root(data_dir, user_id, thread_id)

    def _rm() -> bool:
        if not root.exists() and not root.is_symlink():
            return False
        if root.is_symlink():
            root.unlink()
            return True
        shutil.rmtree(root)
        return True

    return await asyncio.to_thread(_rm)
