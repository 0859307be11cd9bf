"""Channel errors (the gateway maps them to HTTP)."""

from __future__ import annotations


class ChannelError(Exception):
    """A channel failed (a platform call, a bad event)."""


class PlatformError(ChannelError):
    """The platform refused a call or could not be reached; `retry_after` when it said."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnknownChannel(ChannelError):
    """No channel of that name is configured."""


class BadSignature(ChannelError):
    """A webhook request whose signature (or timestamp) does not verify."""
