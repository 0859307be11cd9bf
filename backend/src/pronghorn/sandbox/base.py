"""The sandbox contract the agent's tools are written against.

Every path argument is a virtual path (``/mnt/user-data/...``) or a path relative to the
workspace; every path returned is virtual. Failures raise
:class:`~pronghorn.sandbox.errors.SandboxError` (or its subclass ``PathDeniedError``) with
a message meant for the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import ThreadPaths


@dataclass(frozen=True, slots=True)
class CommandResult:
    """Outcome of one command. ``exit_code`` is -9 (SIGKILL) when the command was killed.

    ``limits_hit`` names each resource limit the command ran into (``processes``,
    ``memory``, ``cpu``, ``file_size``, ``quota``); stderr then ends with one
    ``[sandbox limit] ...`` line per limit, written for the model.
    """

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    limits_hit: tuple[str, ...] = ()


@runtime_checkable
class Sandbox(Protocol):
    @property
    def thread_paths(self) -> ThreadPaths: ...

    async def execute(self, command: str, timeout_s: float | None = None) -> CommandResult:
        """Run ``command`` with bash in the workspace; never raises for a failing command."""
        ...

    async def read_file(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        """Text of a file; lines are 1-indexed and the range is inclusive."""
        ...

    async def write_file(self, path: str, content: str, append: bool = False) -> None:
        """Create or overwrite (or append to) a file, creating parent folders."""
        ...

    async def str_replace(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        """Replace ``old`` by ``new``; error when ``old`` is missing or ambiguous.

        Returns the number of replacements made.
        """
        ...

    async def list_dir(self, path: str, max_depth: int = 2) -> list[str]:
        """Virtual paths below ``path`` (folders end with ``/``), up to ``max_depth`` levels."""
        ...

    async def glob(self, pattern: str, path: str | None = None) -> list[str]:
        """Virtual paths matching ``pattern`` (``**`` recurses) below ``path`` (workspace)."""
        ...

    async def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_matches: int = 200,
    ) -> list[str]:
        """Regex search; each hit is ``/mnt/user-data/...:<line>: <text>``."""
        ...


@runtime_checkable
class SandboxProvider(Protocol):
    async def acquire(self, user_id: str, thread_id: str) -> Sandbox: ...

    async def release(self, sandbox: Sandbox) -> None: ...

    async def close(self) -> None: ...


def command_timeout(command: str, timeout_s: float | None, default_s: float) -> float:
    """The timeout one ``execute`` call runs under, after refusing what no provider runs (an
    empty command, a NUL byte, a timeout that is not positive)."""
    if not isinstance(command, str) or not command.strip():  # pyright: ignore[reportUnnecessaryIsInstance] -- the model's tool call is untyped JSON
        raise SandboxError("The command is empty.")
    if "\x00" in command:
        raise SandboxError("The command contains a NUL byte.")
    timeout = default_s if timeout_s is None else float(timeout_s)
    if timeout <= 0:
        raise SandboxError("timeout must be positive.")
    return timeout
