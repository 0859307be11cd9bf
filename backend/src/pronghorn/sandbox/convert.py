"""Markdown copies of uploaded documents, made by a separate, bounded process.

``convert_worker.py`` runs with the uploaded file as its stdin and an empty environment,
under bubblewrap with every namespace unshared (no network; only the system folders and
the Python install visible, read-only) when ``uploads.convert.isolation`` allows it. It
lowers its own address space and CPU time before reading; here the wall-clock time is
bounded (the process group is killed) and so is what is read of its output
(``max_output_bytes``: the copy is cut there and says so).

The copy is saved beside the original as ``NAME.md`` (``report.docx`` → ``report.docx.md``)
in the same uploads folder, through its descriptor (``uploads.py``). A failure is one
sentence for that file; it never fails the upload of the file itself or of the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from pronghorn.config.schema.app import UploadConvertConfig
from pronghorn.sandbox import bwrap as bw
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.limits import human_bytes
from pronghorn.sandbox.paths import ThreadPaths
from pronghorn.sandbox.process import kill_group
from pronghorn.sandbox.uploads import UploadsFolder

log = logging.getLogger("pronghorn.uploads")

WORKER = Path(__file__).with_name("convert_worker.py")
COPY_SUFFIX = ".md"
MAX_STDERR = 4096
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Converted:
    """The outcome for one file: the copy's name and size, or why there is none."""

    source: str
    name: str | None = None
    size: int = 0
    truncated: bool = False
    error: str | None = None


def copy_name(name: str) -> str:
    return f"{name}{COPY_SUFFIX}"


def extension(name: str) -> str:
    stem, dot, ext = name.rpartition(".")
    return ext.lower() if dot and stem else ""


def wants(config: UploadConvertConfig, name: str) -> bool:
    """Whether an upload called ``name`` gets a Markdown copy."""
    return config.enabled and extension(name) in {e.lower() for e in config.extensions}


def pair_copies(entries: list[tuple[str, int]]) -> list[tuple[str, int, str | None]]:
    """``(name, size, copy)`` of each upload that is not itself the copy of another one
    (``report.docx.md`` beside ``report.docx``); ``copy`` names its Markdown copy."""
    names = {name for name, _ in entries}
    out: list[tuple[str, int, str | None]] = []
    for name, size in entries:
        if name.endswith(COPY_SUFFIX) and name[: -len(COPY_SUFFIX)] in names:
            continue
        out.append((name, size, copy_name(name) if copy_name(name) in names else None))
    return out


def _python_roots() -> list[str]:
    """Folders the worker's interpreter and its packages live in (bound read-only)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return sorted(r for r in roots if r and not r.startswith(bw.SYSTEM_DIRS))


def _bwrap_argv(binary: str, command: list[str]) -> list[str]:
    args = [
        binary,
        "--unshare-all",
        "--unshare-user",
        "--uid",
        str(bw.SANDBOX_UID),
        "--gid",
        str(bw.SANDBOX_GID),
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        *bw.system_args(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
    ]
    for root in _python_roots():
        args += ["--ro-bind", root, root]
    args += ["--ro-bind", str(WORKER), str(WORKER), "--setenv", "PATH", bw.SANDBOX_PATH]
    args += ["--setenv", "HOME", "/tmp", "--chdir", "/tmp", *command]
    return args


class DocumentConverter:
    """Runs conversions; remembers whether bubblewrap works here (probed once)."""

    def __init__(self) -> None:
        self._bwrap: str | None = None
        self._probed = False
        self._lock = asyncio.Lock()

    async def _isolation(self, config: UploadConvertConfig) -> tuple[str | None, str | None]:
        """(bwrap binary or None, error): None for a plain process; an error when
        ``isolation: bwrap`` cannot be had."""
        if config.isolation == "none":
            return None, None
        async with self._lock:
            if not self._probed:
                self._probed = True
                binary = bw.find_bwrap()
                if binary is not None:
                    ok, reason = await bw.probe(binary, network=False)
                    if ok:
                        self._bwrap = binary
                    else:
                        log.warning("bubblewrap does not work here: %s", reason)
                if self._bwrap is None and config.isolation == "auto":
                    log.warning(
                        "uploads.convert: bubblewrap is not available; documents are "
                        "converted in a plain child process that could reach the network "
                        "(set uploads.convert.isolation: bwrap to refuse instead)"
                    )
        if self._bwrap is None and config.isolation == "bwrap":
            return (
                None,
                "no conversion: bubblewrap (uploads.convert.isolation: bwrap) is unavailable",
            )
        return self._bwrap, None

    async def convert_upload(
        self, folder: UploadsFolder, name: str, config: UploadConvertConfig
    ) -> Converted:
        """Convert the upload ``name`` and save its copy beside it."""
        binary, refused = await self._isolation(config)
        if refused is not None:
            return Converted(name, error=refused)
        try:
            fd = await asyncio.to_thread(os.open, name, _READ, dir_fd=folder.fd)
        except OSError as exc:
            return Converted(name, error=f"could not open the file: {exc.strerror}")
        try:
            outcome = await self._run(fd, extension(name), binary, config)
        finally:
            os.close(fd)
        if isinstance(outcome, str):
            return Converted(name, error=outcome)
        markdown, truncated = outcome
        target = copy_name(name)
        try:
            placed = await asyncio.to_thread(_save, folder, target, markdown)
        except OSError as exc:
            return Converted(name, error=f"could not save the Markdown copy: {exc.strerror}")
        if not placed:
            return Converted(name, error=f"a file named {target!r} is already there")
        return Converted(name, name=target, size=len(markdown), truncated=truncated)

    async def _run(
        self, stdin: int, ext: str, binary: str | None, config: UploadConvertConfig
    ) -> tuple[bytes, bool] | str:
        cpu = max(1, math.ceil(config.timeout_s))
        command = [sys.executable, "-I", str(WORKER), ext, str(config.memory_bytes), str(cpu)]
        argv = _bwrap_argv(binary, command) if binary else command
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=stdin,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={} if binary else {"PATH": bw.SANDBOX_PATH, "HOME": "/nonexistent"},
                cwd="/",
                start_new_session=True,
            )
        except OSError as exc:
            return f"could not start the converter: {exc.strerror}"
        cap = config.max_output_bytes
        out = bytearray()
        err = bytearray()

        async def pump(reader: asyncio.StreamReader | None, sink: bytearray, limit: int) -> None:
            # Always read to the end of the pipe: a pipe left half read keeps its transport
            # open (asyncio pauses a full reader and never sees the EOF) after the child is
            # gone. Past the limit the bytes are dropped; past the output cap the worker is
            # killed, since the rest would be cut anyway.
            assert reader is not None
            while chunk := await reader.read(64 * 1024):
                if len(sink) <= limit:
                    sink += chunk[: limit + 1 - len(sink)]
                if len(sink) > limit and sink is out and proc.returncode is None:
                    kill_group(proc.pid)

        pumps = asyncio.gather(pump(proc.stdout, out, cap), pump(proc.stderr, err, MAX_STDERR))
        timed_out = False
        try:
            async with asyncio.timeout(config.timeout_s):
                await asyncio.shield(pumps)
                await proc.wait()
        except TimeoutError:
            timed_out = True
        finally:
            if proc.returncode is None:
                kill_group(proc.pid)
            # The worker's whole group is dead now, so both pipes reach their end at once.
            try:
                await asyncio.wait_for(asyncio.shield(pumps), 5)
            except (TimeoutError, asyncio.CancelledError):
                pumps.cancel()
            with contextlib.suppress(BaseException):
                await pumps
            await proc.wait()
        if timed_out:
            return f"the conversion took longer than {config.timeout_s:g} s and was stopped"
        if len(out) > cap:
            return _cut(bytes(out), cap), True
        if proc.returncode != 0:
            return _failure(proc.returncode, err.decode("utf-8", "replace"), config)
        return bytes(out), False


def _cut(data: bytes, cap: int) -> bytes:
    text = data[:cap].decode("utf-8", "ignore")
    cut = text.rfind("\n")
    if cut > cap // 2:
        text = text[:cut]
    note = f"\n\n[Markdown copy cut at {human_bytes(cap)} (uploads.convert.max_output_bytes)]\n"
    return (text + note).encode()


def _failure(code: int | None, stderr: str, config: UploadConvertConfig) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    last = lines[-1].strip() if lines else ""
    if code is not None and code < 0:
        sig = -code
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return f"the converter was stopped (CPU time, limit {config.timeout_s:g} s)"
        return f"the converter died ({signal.Signals(sig).name})"
    if "MemoryError" in last or "out of memory" in last or "cannot allocate memory" in last:
        return (
            f"the document needs more memory than {human_bytes(config.memory_bytes)} "
            "(uploads.convert.memory_bytes)"
        )
    if last.startswith("bwrap:"):
        return f"the converter's sandbox could not start: {last}"
    return f"not a readable document ({last})" if last else "the converter failed"


def _save(folder: UploadsFolder, name: str, data: bytes) -> bool:
    temp, fh = folder.create_temp()
    try:
        with fh:
            fh.write(data)
        return folder.link(temp, name)
    finally:
        folder.unlink([temp])


async def convert_stored(
    converter: DocumentConverter,
    paths: ThreadPaths,
    names: list[str],
    config: UploadConvertConfig,
) -> list[Converted]:
    """Markdown copies of the uploads ``names`` that want one, one after the other."""
    todo = [n for n in names if wants(config, n)]
    if not todo:
        return []
    try:
        folder = await asyncio.to_thread(UploadsFolder.open, paths)
    except SandboxError as exc:
        return [Converted(n, error=str(exc)) for n in todo]
    try:
        return [await converter.convert_upload(folder, n, config) for n in todo]
    finally:
        await asyncio.to_thread(folder.close)
