"""The records that travel between a transport and the dispatcher."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class InboundFile:
    """A file attached to a message; `ref` is the platform's handle (a Telegram file_id, a
    Slack private download URL) the transport downloads it by."""

    name: str
    ref: str
    size: int | None = None


@dataclass(frozen=True, slots=True)
class Inbound:
    """One message from a platform, already normalised by its transport."""

    delivery_id: str  # unique per platform delivery: redeliveries repeat it
    chat_id: str
    user_id: str
    text: str
    user_name: str = ""
    topic_id: str | None = None  # Slack thread_ts, Telegram group reply root
    is_group: bool = False
    mentioned: bool = False  # the bot was mentioned (or replied to)
    from_bot: bool = False  # a bot (or the bot itself) sent it
    files: tuple[InboundFile, ...] = ()
    reply_ref: str | None = None  # a platform handle replies go through (a Discord interaction)

    @property
    def chat_key(self) -> str:
        return f"{self.chat_id}:{self.topic_id}" if self.topic_id else self.chat_id


@dataclass(frozen=True, slots=True)
class Target:
    """Where replies of one conversation go."""

    chat_id: str
    topic_id: str | None = None
    is_group: bool = False
    reply_ref: str | None = None  # Inbound.reply_ref: the transport answers through it


@dataclass(frozen=True, slots=True)
class Sent:
    """A message the bot sent (editable by its id)."""

    chat_id: str
    message_id: str


@dataclass
class ChannelCounts:
    received: int = 0
    replied: int = 0
    dropped_busy: int = 0
    duplicates: int = 0
    refused: int = 0
    errors: int = 0
    files_in: int = 0
    files_out: int = 0
    extra: dict[str, int] = field(default_factory=dict[str, int])
