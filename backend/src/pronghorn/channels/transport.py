"""The contract every platform implements: receive messages, send, edit, upload, download.

A transport knows its platform's wire protocol and nothing about runs or threads. The
channel gives it a `Sink` to deliver `Inbound` messages to; `start` begins receiving (a
long-poll task for Telegram; nothing for Slack, whose events arrive by webhook through
`handle_webhook`) and `stop` ends it. Optional capabilities are detected by overriding:
`supports_edit` (streaming by edits), `handle_webhook`.

A transport that receives by itself (long polling, a socket) is *exclusive*: across
gateway replicas only the one holding the channel's lease runs it (channels/lease.py). One
that only answers webhooks sets `exclusive = False`, and every replica serves it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from pronghorn.channels.types import Inbound, InboundFile, Sent, Target

Sink = Callable[[Inbound], Awaitable[None]]
ErrorReport = Callable[[str], None]


class Transport(Protocol):
    name: str
    max_text: int  # longest text one message may carry
    supports_edit: bool

    def edit_interval(self, target: Target) -> float:
        """Least seconds between two edits of one message to `target`."""
        ...

    async def start(self, sink: Sink, report: ErrorReport) -> None:
        """Begin receiving; deliver each message to `sink`, failures to `report`."""

    async def stop(self) -> None:
        """Stop receiving and close connections."""

    async def send(self, target: Target, text: str) -> Sent:
        """Post `text` (already in the platform's format) to the conversation."""
        ...

    async def edit(self, sent: Sent, text: str) -> None:
        """Replace the text of a message the bot sent."""

    async def upload(self, target: Target, name: str, data: bytes) -> None:
        """Send a file to the conversation."""

    async def download(self, file: InboundFile, max_bytes: int) -> bytes:
        """The bytes of a file a user sent (PlatformError beyond `max_bytes`)."""
        ...

    def render(self, markdown: str) -> str:
        """Markdown as the platform's message format."""
        ...


def exclusive(transport: Transport) -> bool:
    """Whether only one replica may run it (default: yes, unless it says `exclusive = False`)."""
    return bool(getattr(transport, "exclusive", True))
