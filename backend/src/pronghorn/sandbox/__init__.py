"""Per-thread sandbox: path mapping, file tools and command execution."""

from pronghorn.sandbox.base import CommandResult, Sandbox, SandboxProvider
from pronghorn.sandbox.errors import PathDeniedError, SandboxError
from pronghorn.sandbox.local import LocalSandbox, LocalSandboxProvider
from pronghorn.sandbox.paths import (
    VIRTUAL_ROOT,
    ThreadPaths,
    delete_thread_dirs,
    resolve_virtual,
    to_virtual,
)

__all__ = [
    "VIRTUAL_ROOT",
    "CommandResult",
    "LocalSandbox",
    "LocalSandboxProvider",
    "PathDeniedError",
    "Sandbox",
    "SandboxError",
    "SandboxProvider",
    "ThreadPaths",
    "delete_thread_dirs",
    "resolve_virtual",
    "to_virtual",
]
