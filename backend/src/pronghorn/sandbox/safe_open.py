"""Open a path under a thread root exactly once, without following links out of it.

A command running in the sandbox can swap any folder below the thread root for a symlink
at any moment. Checking a path by name and then opening it again by name (``resolve`` +
``open``) leaves a window in which the second lookup lands outside the thread. Here every
lookup is relative to a descriptor: the walk starts at an ``O_DIRECTORY`` descriptor of the
thread root and opens one component at a time with ``O_NOFOLLOW`` (``os.open(name,
dir_fd=...)``), so no component is ever looked up through a link the kernel followed.

A component that is a symlink is not followed by the kernel. Its text is read
(``readlink`` relative to the same descriptor) and interpreted *here*, inside the thread:
a relative target is joined to the folder holding the link, an absolute target must be
under ``/mnt/user-data`` (or the thread's host root) and is mapped to the thread root;
the walk then restarts from the root descriptor. A target leaving the thread is refused.
Whatever the links say, and however they change meanwhile, every descriptor returned
was reached from the root through real folders only.

The final file is opened non-blocking (a FIFO cannot hang the caller) and checked with
``fstat``: only regular files (or folders, when asked for) are returned. Callers use the
descriptor for everything afterwards (read, write, truncate, ``fstat``, serve).

All functions block: call them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from pronghorn.sandbox.errors import PathDeniedError, SandboxError
from pronghorn.sandbox.paths import FOLDERS, VIRTUAL_ROOT, ThreadPaths, normalize_virtual

MAX_LINK_HOPS = 40
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
_FILE_EXTRA = _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC

T = TypeVar("T")


class MissingPathError(SandboxError):
    """The path (or one of its folders) does not exist."""


class NotRegularFileError(SandboxError):
    """The path exists but is not what was asked for (a folder, FIFO, socket, device...)."""


@dataclass(frozen=True, slots=True)
class Opened:
    """An open descriptor, its ``fstat`` and the virtual path it was reached by.

    ``virtual`` is the path actually opened (links inside the thread followed). Close it
    with :meth:`close` or use it as a context manager.
    """

    fd: int
    info: os.stat_result
    virtual: str

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def kind_of(mode: int) -> str:
    """A word for a file type, for error messages."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _deny(shown: str, why: str) -> PathDeniedError:
    return PathDeniedError(
        f"Access denied: {shown!r} {why}. Only paths under {VIRTUAL_ROOT}/workspace, "
        f"{VIRTUAL_ROOT}/uploads and {VIRTUAL_ROOT}/outputs are available."
    )


def open_root(paths: ThreadPaths) -> int:
    """An ``O_DIRECTORY`` descriptor of the thread root (the root itself is not a link)."""
    try:
        return os.open(paths.root, DIR_FLAGS)
    except FileNotFoundError:
        raise MissingPathError("The thread has no files yet.") from None
    except OSError as exc:
        raise SandboxError(f"The thread folder cannot be opened ({exc.strerror}).") from None


def _parts(virtual: str) -> list[str]:
    rest = virtual[len(VIRTUAL_ROOT) :].strip("/")
    return [p for p in rest.split("/") if p] if rest else []


def _link_text(dir_fd: int, name: str) -> str | None:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return None


def _link_base(paths: ThreadPaths, shown: str, target: str) -> list[str]:
    """Components of an absolute link target, relative to the thread root."""
    for prefix in (VIRTUAL_ROOT, str(paths.root), str(paths.root.resolve())):
        if target == prefix or target.startswith(prefix.rstrip("/") + "/"):
            return target[len(prefix) :].split("/")
    raise _deny(shown, "leads outside the thread folders (symlink)")


def _open_dir_entry(dir_fd: int, name: str, create: bool) -> int:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    # FileExistsError: created meanwhile (or a link appeared: the open below refuses it).
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o770, dir_fd=dir_fd)
    return os.open(name, DIR_FLAGS, dir_fd=dir_fd)


def walk(
    paths: ThreadPaths,
    virtual: str,
    final: Callable[[int, str, str], T],
    *,
    create_dirs: bool = False,
    on_root: Callable[[int], T] | None = None,
) -> T:
    """Walk to the last component of ``virtual`` and return ``final(dir_fd, name, real)``.

    ``dir_fd`` is a descriptor of the folder holding the last component (valid only during
    the call), ``name`` that component and ``real`` the virtual path being opened. When
    ``final`` (or opening a folder on the way) raises ``OSError`` and the component is a
    symlink, the link's text is interpreted inside the thread: its components are walked
    from the folder holding it (from the root when absolute), ``..`` goes back to the real
    parent folder, and going above the root, or to anything but the three folders at the
    root, is refused. ``on_root`` handles a path that is the thread root itself (refused
    when not given). Missing folders are created when ``create_dirs`` is set.
    """
    shown = normalize_virtual(virtual)
    todo: list[str] = _parts(shown)
    fds = [open_root(paths)]
    names: list[str] = []
    hops = 0

    def outside() -> PathDeniedError:
        return _deny(shown, "leads outside the thread folders (symlink)")

    try:
        while True:
            if not todo:
                if not names:
                    if on_root is None:
                        raise _deny(shown, "is the thread root, not a file")
                    return on_root(fds[0])
                # The path ended in a folder reached by "." or ".." (from a link).
                todo = [names.pop()]
                os.close(fds.pop())
            name = todo.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not names:
                    raise outside()
                names.pop()
                os.close(fds.pop())
                continue
            if not names and name not in FOLDERS:
                raise outside()
            cur = fds[-1]
            try:
                if not todo:
                    return final(cur, name, "/".join([VIRTUAL_ROOT, *names, name]))
                nxt = _open_dir_entry(cur, name, create_dirs)
            except OSError as exc:
                target = _link_text(cur, name)
                if target is None:
                    raise _os_error(exc, shown, not todo) from None
                hops += 1
                if hops > MAX_LINK_HOPS:
                    raise _deny(
                        shown, f"goes through more than {MAX_LINK_HOPS} symbolic links"
                    ) from None
                if target.startswith("/"):
                    base = _link_base(paths, shown, target)
                    while len(fds) > 1:
                        os.close(fds.pop())
                    names.clear()
                    todo = [*base, *todo]
                else:
                    todo = [*target.split("/"), *todo]
                continue
            fds.append(nxt)
            names.append(name)
    finally:
        for fd in fds:
            os.close(fd)


def _os_error(exc: OSError, shown: str, last: bool) -> SandboxError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return MissingPathError(f"Not found: {shown}")
    if exc.errno == errno.EISDIR:
        return NotRegularFileError(f"{shown} is a directory, not a file.")
    if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP, errno.ENODEV):
        return NotRegularFileError(
            f"{shown} is not a regular file (a FIFO, socket or device); file tools only "
            "work on regular files."
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return SandboxError(f"Permission denied: {shown}")
    if exc.errno == errno.ELOOP:
        return _deny(shown, "goes through a symbolic link that cannot be followed")
    what = "file" if last else "folder"
    return SandboxError(f"Cannot open the {what} {shown}: {exc.strerror or exc}")


def open_file(
    paths: ThreadPaths,
    virtual: str,
    flags: int = os.O_RDONLY,
    *,
    create_dirs: bool = False,
    mode: int = 0o660,
) -> Opened:
    """Open a regular file under the thread root (``flags`` e.g. ``O_RDWR | O_CREAT``).

    Never pass ``O_TRUNC``: truncate the returned descriptor once it is known to be a
    regular file. Raises :class:`MissingPathError`, :class:`NotRegularFileError` (folders,
    FIFOs, sockets, devices) or :class:`PathDeniedError`.
    """
    if flags & os.O_TRUNC:
        raise ValueError("open_file: truncate after the check, not with O_TRUNC")

    def final(dir_fd: int, name: str, real: str) -> Opened:
        fd = os.open(name, flags | _FILE_EXTRA, mode, dir_fd=dir_fd)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                shown = normalize_virtual(virtual)
                if stat.S_ISDIR(info.st_mode):
                    raise NotRegularFileError(
                        f"{shown} is a directory, not a file (use ls to list it)."
                    )
                raise NotRegularFileError(
                    f"{shown} is {kind_of(info.st_mode)}, not a regular file; file tools only "
                    "work on regular files."
                )
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return Opened(fd, info, real)

    return walk(paths, virtual, final, create_dirs=create_dirs)


def open_dir(paths: ThreadPaths, virtual: str, *, create: bool = False) -> Opened:
    """Open a folder under the thread root (the root itself included)."""

    def opened(fd: int, real: str) -> Opened:
        try:
            info = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        return Opened(fd, info, real)

    def final(dir_fd: int, name: str, real: str) -> Opened:
        try:
            fd = _open_dir_entry(dir_fd, name, create)
        except NotADirectoryError:
            if _link_text(dir_fd, name) is not None:
                raise  # a link: walk() follows it
            shown = normalize_virtual(virtual)
            raise NotRegularFileError(f"{shown} is a file, not a directory.") from None
        return opened(fd, real)

    return walk(
        paths,
        virtual,
        final,
        create_dirs=create,
        on_root=lambda root_fd: opened(os.dup(root_fd), VIRTUAL_ROOT),
    )


def open_entry(dir_fd: int, name: str, flags: int = os.O_RDONLY) -> Opened | None:
    """Open ``name`` in an open folder if it is a regular file (no links, no FIFOs).

    Returns None for anything else (and for names that vanished meanwhile).
    """
    try:
        fd = os.open(name, flags | _FILE_EXTRA, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return Opened(fd, info, name)


def open_file_or_dir(paths: ThreadPaths, virtual: str) -> Opened:
    """Open a regular file or a folder for reading (anything else is refused)."""

    def final(dir_fd: int, name: str, real: str) -> Opened:
        fd = os.open(name, os.O_RDONLY | _FILE_EXTRA, dir_fd=dir_fd)
        try:
            info = os.fstat(fd)
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                raise NotRegularFileError(
                    f"{normalize_virtual(virtual)} is {kind_of(info.st_mode)}, not a regular "
                    "file or folder."
                )
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return Opened(fd, info, real)

    def root(root_fd: int) -> Opened:
        fd = os.dup(root_fd)
        return Opened(fd, os.fstat(fd), VIRTUAL_ROOT)

    return walk(paths, virtual, final, on_root=root)


def real_path(paths: ThreadPaths, virtual: str) -> str:
    """The virtual path ``virtual`` leads to once links inside the thread are followed.

    Raises :class:`PathDeniedError` when a link leads out, :class:`MissingPathError` when
    the target does not exist.
    """

    def final(dir_fd: int, name: str, real: str) -> str:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            raise OSError(errno.ELOOP, "symbolic link")  # walk() follows it inside the thread
        return real

    return walk(paths, virtual, final, on_root=lambda _fd: VIRTUAL_ROOT)
