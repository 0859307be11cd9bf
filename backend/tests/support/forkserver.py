"""`python -m pronghorn.cli …` subprocesses forked from a warm interpreter, not started cold.

A cold start imports the gateway and its dependencies (LangChain, LangGraph, SQLAlchemy,
uvicorn): about 2 s of CPU each time, and the suite starts some 70 of them (``pronghorn
serve`` for ``LiveServer``, the CLI). A fork server imports them once per test process; each
``popen`` forks it, and the child turns into the requested ``python -m MODULE ARGS`` with its
own session, working directory, environment and stdio: the process ``subprocess.Popen`` would
have started, without the imports.

The forked child's parent is the fork server, not the test, so ``popen`` returns a
``ForkedProcess``: the part of ``Popen``'s interface the tests use (``pid``, ``poll``,
``wait``, ``returncode``, ``send_signal``, ``kill``, ``terminate``). The fork server reports
each child's exit status over a socket of that child's; a child whose socket the test
process closes is killed, and the fork server (with what is left of its children) ends with
the test process.

What the fork server cannot start faithfully goes to ``subprocess.Popen`` as before: another
program than ``python -m``, or an environment that changes how Python starts (``PYTHON*``
other than the bytecode cache and buffering, ``LD_*``). ``PRONGHORN_TEST_FORK_SERVER=0``
sends everything there.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import runpy
import select
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

TESTS_DIR = Path(__file__).resolve().parents[1]
# What the fork server imports before it forks anything: what every `pronghorn serve` loads.
PRELOAD = ("pronghorn.cli", "pronghorn.gateway.app", "uvicorn")
# Start-up settings a forked child cannot take on: they act before the first import. Those
# that change nothing a test sees are not among them: where .pyc files go, and whether
# stdout is buffered (logging flushes every record; the CLI's output is read after it ends).
_HARMLESS = {"PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONUNBUFFERED"}
_MAX_REQUEST = 1 << 20


def _startup_settings(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LD_")) and k not in _HARMLESS}


class ForkedProcess:
    """A child of the fork server, seen from the test process (a `Popen` look-alike)."""

    def __init__(self, status: socket.socket, args: Sequence[str], timeout: float = 120) -> None:
        self.args = list(args)
        self.returncode: int | None = None
        self._status = status
        self._buf = b""
        line = self._read_line(timeout)
        if line is None or not line.startswith(b"pid "):
            status.close()
            raise RuntimeError(f"the fork server did not start {self.args}")
        self.pid = int(line.removeprefix(b"pid "))

    def _read_line(self, timeout: float | None) -> bytes | None:
        """The next line the fork server sends; None on timeout; b"" once it is gone."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([self._status], [], [], left)
            if not readable:
                return None
            chunk = self._status.recv(4096)
            if not chunk:
                return b""
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _collect(self, timeout: float | None) -> bool:
        line = self._read_line(timeout)
        if line is None:
            return False
        if line.startswith(b"exit "):
            self.returncode = int(line.removeprefix(b"exit "))
        else:  # the fork server died: its child does not outlive it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self.returncode = -signal.SIGKILL
        self._status.close()
        return True

    def close(self) -> None:
        """Drop the handle: a child still running is killed by the fork server."""
        self._status.close()

    def poll(self) -> int | None:
        if self.returncode is None:
            self._collect(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and not self._collect(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


Process = subprocess.Popen[bytes] | ForkedProcess


class ForkServer:
    """One warm interpreter per test process that forks the requested `python -m` children."""

    def __init__(self, env: Mapping[str, str], timeout: float = 300) -> None:
        self.env = dict(env)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "support.forkserver", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            cwd=TESTS_DIR,
            env=self.env,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        theirs.close()
        self._sock = ours
        self._lock = threading.Lock()
        readable, _, _ = select.select([ours], [], [], timeout)
        if not readable or ours.recv(16) != b"ready":
            self.close()
            raise RuntimeError("the fork server did not start")

    @property
    def pid(self) -> int:
        return self._proc.pid

    def serves(self, argv: Sequence[str], env: Mapping[str, str]) -> bool:
        return (
            len(argv) >= 3
            and argv[0] == sys.executable
            and argv[1] == "-m"
            and _startup_settings(env) == _startup_settings(self.env)
            and self._proc.poll() is None
        )

    def spawn(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], stdio: tuple[int, int, int]
    ) -> ForkedProcess:
        request = json.dumps({"argv": list(argv), "cwd": str(cwd), "env": dict(env)}).encode()
        ours, theirs = socket.socketpair()
        try:
            with self._lock:
                socket.send_fds(self._sock, [request], [*stdio, theirs.fileno()])
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return ForkedProcess(ours, argv)

    def close(self) -> None:
        self._sock.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(5)


class _Owner:
    """The test process's fork server, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ForkServer | None = None

    def get(self, env: Mapping[str, str]) -> ForkServer | None:
        """The fork server (started with `env` if it is not running), or None when it is
        turned off."""
        if os.environ.get("PRONGHORN_TEST_FORK_SERVER", "1") == "0":
            return None
        with self._lock:
            if self._server is None:
                self._server = ForkServer(env)
            return self._server

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.close()
                self._server = None


# One per test process, like the process itself: LiveServer takes it from here for the
# servers and CLI runs it starts; tests/conftest.py closes it when pytest ends.
OWNER = _Owner()


def _stdio_fd(stream: int | IO[bytes] | None, null: int) -> int:
    """The descriptor a child gets for `stream`: its own, or /dev/null for None/DEVNULL (a
    forked child has no terminal to inherit; PIPE is not offered)."""
    if stream is None or stream == subprocess.DEVNULL:
        return null
    if stream == subprocess.PIPE:
        raise ValueError("popen: pass files, not subprocess.PIPE (see run)")
    return stream if isinstance(stream, int) else stream.fileno()


def popen(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    server: ForkServer | None,
    stdin: int | IO[bytes] | None = None,
    stdout: int | IO[bytes] | None = None,
    stderr: int | IO[bytes] | None = None,
) -> Process:
    """`subprocess.Popen(argv, cwd=, env=, stdin=, stdout=, stderr=, start_new_session=True)`,
    forked from `server` when it can (`stderr=subprocess.STDOUT` is understood)."""
    if server is None or not server.serves(argv, env):
        return subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    with open(os.devnull, "r+b") as null:
        out = _stdio_fd(stdout, null.fileno())
        err = out if stderr == subprocess.STDOUT else _stdio_fd(stderr, null.fileno())
        return server.spawn(argv, cwd, env, (_stdio_fd(stdin, null.fileno()), out, err))


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    server: ForkServer | None,
    input: str | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(argv, input=, capture_output=True, text=True, timeout=)`; its stdio
    goes through files, so no pipe can fill up and nothing needs a reader thread."""
    with (
        tempfile.TemporaryFile() as fin,
        tempfile.TemporaryFile() as fout,
        tempfile.TemporaryFile() as ferr,
    ):
        fin.write((input or "").encode())
        fin.seek(0)
        proc = popen(argv, cwd=cwd, env=env, server=server, stdin=fin, stdout=fout, stderr=ferr)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
            raise
        fout.seek(0)
        ferr.seek(0)
        out, err = fout.read().decode(), ferr.read().decode()
    return subprocess.CompletedProcess(list(argv), code, out, err)


# --- the fork server's side ----------------------------------------------------------------


@dataclass
class _Child:
    """What a forked child turns into: `python -m argv[2] argv[3:]` in `cwd` with `env`."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    stdio: list[int]
    status: socket.socket

    def run(self) -> None:
        os.setsid()  # before the test learns the pid: killpg(pid) then reaches it
        self.status.sendall(f"pid {os.getpid()}\n".encode())
        self.status.close()
        for target, fd in enumerate(self.stdio):
            os.dup2(fd, target)
        for fd in set(self.stdio) - {0, 1, 2}:
            os.close(fd)
        os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.env)
        sys.path[0] = self.cwd  # as `python -m` sets it: the start directory first
        sys.argv = [self.argv[0], *self.argv[3:]]
        # Preloaded as a module, run as __main__: a `python -m` run has only the latter.
        sys.modules.pop(self.argv[2], None)
        runpy.run_module(self.argv[2], run_name="__main__", alter_sys=True)


class _Server:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.children: dict[int, socket.socket] = {}
        self.sel = selectors.DefaultSelector()
        self.wake_r, self.wake_w = os.pipe()

    def serve(self) -> _Child | None:
        """Fork children until the test process goes away; returns in each child (its job)."""
        for name in PRELOAD:
            __import__(name)
        # What is loaded now is shared with every child: out of the collector's reach, a
        # child's collections neither walk it nor copy its pages (as `serve` does later).
        gc.freeze()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.sel.register(self.sock, selectors.EVENT_READ)
        self.sel.register(self.wake_r, selectors.EVENT_READ)
        self.sock.send(b"ready")
        while True:
            for key, _ in self.sel.select():
                if key.fileobj is self.sock:
                    msg, fds, _, _ = socket.recv_fds(self.sock, _MAX_REQUEST, 4)
                    if not msg:
                        self._end_all()
                        return None
                    child = self._fork(json.loads(msg), fds)
                    if child is not None:
                        return child
                elif key.fileobj == self.wake_r:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_r, 4096)
                else:  # the test closed its end: the child is not wanted any more
                    self.sel.unregister(key.fileobj)
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(key.data, signal.SIGKILL)
            self._reap()

    def _fork(self, request: dict[str, object], fds: list[int]) -> _Child | None:
        status = socket.socket(fileno=fds[3])
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            self.sel.close()
            for sock in (self.sock, *self.children.values()):
                sock.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            argv, cwd, env = request["argv"], request["cwd"], request["env"]
            assert isinstance(argv, list) and isinstance(cwd, str) and isinstance(env, dict)
            return _Child(argv, cwd, env, fds[:3], status)
        for fd in fds[:3]:
            os.close(fd)
        self.children[pid] = status
        self.sel.register(status, selectors.EVENT_READ, pid)
        return None

    def _reap(self) -> None:
        while True:
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            status = self.children.pop(pid, None)
            if status is None:
                continue
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(status)
            with contextlib.suppress(OSError):
                status.sendall(f"exit {os.waitstatus_to_exitcode(code)}\n".encode())
            status.close()

    def _end_all(self) -> None:
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def main() -> None:
    child = _Server(socket.socket(fileno=int(sys.argv[1]))).serve()
    if child is not None:
        child.run()


if __name__ == "__main__":
    main()
