"""Run one child process with a timeout that kills its whole process group and with output
read incrementally into bounded buffers (head + tail), so a chatty command can never make
the gateway buffer unbounded data."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from pronghorn.sandbox.base import CommandResult

_CHUNK = 64 * 1024
# A command that keeps printing after its output was truncated is killed once it has
# produced this many times the cap (it would otherwise spin until the timeout).
RUNAWAY_FACTOR = 100
# How long output is still drained after the shell itself exited.
LINGER_S = 1.0


class CappedText:
    """Keeps the first and last ``cap // 2`` characters of a stream, counts the rest."""

    def __init__(self, cap: int) -> None:
        self._head_cap = cap - cap // 2
        self._tail_cap = cap // 2
        self._head = ""
        self._tail = ""
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final=final)
        if not text:
            return
        self.total += len(text)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        if text and self._tail_cap:
            self._tail = (self._tail + text)[-self._tail_cap :]

    @property
    def truncated(self) -> bool:
        return self.total > len(self._head) + len(self._tail)

    def text(self) -> str:
        if not self.truncated:
            return self._head + self._tail
        dropped = self.total - len(self._head) - len(self._tail)
        return f"{self._head}\n[... {dropped} characters truncated ...]\n{self._tail}"


Watchdog = Callable[[], Awaitable[str | None]]


@dataclass
class _Streams:
    stdout: CappedText
    stderr: CappedText


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (the child was started in a new session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Wait until the child itself exits. ``proc.wait()`` also waits for the pipes to close,
    which a lingering background descendant can hold open indefinitely."""
    delay = 0.005
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout_s: float,
    max_output_chars: int,
    pass_fds: Sequence[int] = (),
    watchdog: Watchdog | None = None,
    watch_interval_s: float = 2.0,
) -> CommandResult:
    """Run ``argv`` (no shell on the host) in a new session; never raises for failures of
    the command itself.

    ``watchdog`` is awaited every ``watch_interval_s`` while the command runs; when it
    returns a sentence, the command is killed and the sentence ends its stderr.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    streams = _Streams(CappedText(max_output_chars), CappedText(max_output_chars))
    runaway_limit = max_output_chars * RUNAWAY_FACTOR
    runaway = asyncio.Event()

    async def pump(reader: asyncio.StreamReader | None, sink: CappedText) -> None:
        if reader is None:
            return
        while True:
            data = await reader.read(_CHUNK)
            if not data:
                sink.feed(b"", final=True)
                return
            sink.feed(data)
            if streams.stdout.total + streams.stderr.total > runaway_limit:
                runaway.set()
                kill_group(proc.pid)

    stopped: list[str] = []

    async def watch() -> None:
        assert watchdog is not None
        while proc.returncode is None:
            await asyncio.sleep(watch_interval_s)
            reason = await watchdog()
            if reason and proc.returncode is None:
                stopped.append(reason)
                kill_group(proc.pid)
                return

    timed_out = False
    watcher = asyncio.create_task(watch()) if watchdog is not None else None
    pumps = asyncio.gather(pump(proc.stdout, streams.stdout), pump(proc.stderr, streams.stderr))
    try:
        async with asyncio.timeout(timeout_s):
            await _exited(proc)
            # The shell is gone; background descendants may still hold the pipes. Drain what
            # is buffered, but do not wait for them.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(pumps), LINGER_S)
    except TimeoutError:
        timed_out = True
    finally:
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(BaseException):
                await watcher
        # Always take the whole group down: nothing started by the command outlives it.
        kill_group(proc.pid)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        # Once the group is dead the pipes reach EOF; bound the wait anyway in case a
        # descendant escaped the group (setsid) and still holds them.
        try:
            await asyncio.wait_for(asyncio.shield(pumps), 5)
        except (TimeoutError, asyncio.CancelledError):
            pumps.cancel()
        with contextlib.suppress(BaseException):
            await pumps
        await proc.wait()

    stderr = streams.stderr.text()
    if timed_out:
        stderr += f"\n[command timed out after {timeout_s:g}s and was killed]"
    elif runaway.is_set():
        stderr += "\n[command killed: it kept producing output far beyond the output cap]"
    for reason in stopped:
        stderr += f"\n[sandbox limit] {reason}"
    return CommandResult(
        exit_code=proc.returncode if proc.returncode is not None else -9,
        stdout=streams.stdout.text(),
        stderr=stderr if streams.stderr.total else stderr.lstrip("\n"),
        timed_out=timed_out,
        truncated=streams.stdout.truncated or streams.stderr.truncated or runaway.is_set(),
    )
