"""Errors raised by the sandbox. Messages are written for the model: they name virtual paths
(``/mnt/user-data/...``), never host paths, and say what to do instead."""

from __future__ import annotations


class SandboxError(Exception):
    """A sandbox operation failed; ``str(error)`` is safe to show to the model."""


class PathDeniedError(SandboxError):
    """A path points outside the thread's ``/mnt/user-data`` folders."""
