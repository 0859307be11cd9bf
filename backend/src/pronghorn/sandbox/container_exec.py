"""One command in a running sandbox container, through the Docker Engine API's exec.

The exec starts a small shell (the *outer* shell) that starts the command in a session of
its own (``setsid``) and writes that session's id to ``/tmp/.pronghorn-exec/<token>``.
When the command's shell exits, the outer shell kills the rest of its process group (its
background jobs), so a ``sleep &`` never holds the call, and exits with the command's status.
When the call times out, or its output runs away, a second exec kills that process group by
the id in the file: the engine has no call that kills an exec's process. Output is read
incrementally into bounded buffers (:class:`~pronghorn.sandbox.process.CappedText`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets

import aiodocker
from aiodocker.containers import DockerContainer
from aiodocker.stream import Stream

from pronghorn.sandbox.base import CommandResult
from pronghorn.sandbox.process import RUNAWAY_FACTOR, CappedText

EXEC_DIR = "/tmp/.pronghorn-exec"
# After the outer shell is gone, output still buffered is drained for at most this long.
_DRAIN_S = 5.0

# $0: token, $1: the command. The command's process group is killed once its shell exits.
_OUTER = (
    f'mkdir -p "{EXEC_DIR}" 2>/dev/null; f="{EXEC_DIR}/$0"; '
    'setsid /bin/bash -c \'printf %s "$$" > "$0"; exec /bin/bash -c "$1"\' "$f" "$1" & '
    'pid=$!; wait $pid; rc=$?; kill -KILL -- -$pid 2>/dev/null; rm -f "$f"; exit $rc'
)

# $0: token. Kills the command's process group (and the session, where pkill exists).
_KILL = (
    f'f="{EXEC_DIR}/$0"; i=0; '
    'while [ ! -s "$f" ] && [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; '
    '[ -s "$f" ] || exit 0; s=$(cat "$f"); '
    'kill -KILL -- -"$s" 2>/dev/null; pkill -KILL -s "$s" 2>/dev/null; exit 0'
)


def command_argv(env: dict[str, str], token: str, command: str) -> list[str]:
    """The exec's argv: a fixed environment (``env -i``), the outer shell, the command."""
    pairs = [f"{key}={value}" for key, value in env.items()]
    return ["/usr/bin/env", "-i", *pairs, "/bin/bash", "-c", _OUTER, token, command]


async def kill_command(container: DockerContainer, user: str, token: str) -> None:
    """Kill the process group of the command started with ``token`` (best effort)."""
    with contextlib.suppress(aiodocker.DockerError, OSError, asyncio.TimeoutError):
        killer = await container.exec(
            ["/bin/sh", "-c", _KILL, token], user=user, stdout=True, stderr=True
        )
        async with asyncio.timeout(10):
            stream = killer.start(detach=False)
            async with stream:
                while await stream.read_out() is not None:
                    pass


async def run_in_container(
    container: DockerContainer,
    command: str,
    *,
    user: str,
    workdir: str,
    env: dict[str, str],
    timeout_s: float,
    max_output_chars: int,
) -> CommandResult:
    """Run ``command`` with bash in ``container``; never raises for a failing command.

    Raises ``aiodocker.DockerError`` when the engine refuses the exec itself."""
    token = secrets.token_hex(12)
    execution = await container.exec(
        command_argv(env, token, command),
        user=user,
        workdir=workdir,
        stdout=True,
        stderr=True,
        stdin=False,
    )
    stdout, stderr = CappedText(max_output_chars), CappedText(max_output_chars)
    runaway_limit = max_output_chars * RUNAWAY_FACTOR
    runaway = False
    timed_out = False
    stream: Stream = execution.start(detach=False)

    async def pump() -> None:
        nonlocal runaway
        while True:
            message = await stream.read_out()
            if message is None:
                return
            (stdout if message.stream == 1 else stderr).feed(message.data)
            if stdout.total + stderr.total > runaway_limit:
                runaway = True
                return

    try:
        try:
            async with asyncio.timeout(timeout_s):
                await pump()
        except TimeoutError:
            timed_out = True
        if timed_out or runaway:
            await kill_command(container, user, token)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_DRAIN_S):
                    await _discard(stream)
    finally:
        await stream.close()
    stdout.feed(b"", final=True)
    stderr.feed(b"", final=True)
    info = await execution.inspect()
    delay = 0.01
    while info.get("Running") and delay < 1:  # the stream can end just before the exit is seen
        await asyncio.sleep(delay)
        delay *= 2
        info = await execution.inspect()
    exit_code = info.get("ExitCode")
    if timed_out or runaway or not isinstance(exit_code, int) or info.get("Running"):
        exit_code = -9
    err = stderr.text()
    if timed_out:
        err += f"\n[command timed out after {timeout_s:g}s and was killed]"
    elif runaway:
        err += "\n[command killed: it kept producing output far beyond the output cap]"
    return CommandResult(
        exit_code=exit_code,
        stdout=stdout.text(),
        stderr=err if stderr.total else err.lstrip("\n"),
        timed_out=timed_out,
        truncated=stdout.truncated or stderr.truncated or runaway,
    )


async def _discard(stream: Stream) -> None:
    while await stream.read_out() is not None:
        pass
