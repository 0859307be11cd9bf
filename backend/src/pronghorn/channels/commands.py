"""Chat commands: parsing (leading mentions stripped, `/cmd@bot` accepted) and the help."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Slack `<@U123>`, Telegram/Discord `@name`, at the start, with separators after it.
_MENTION = re.compile(r"^(?:\s*(?:<@[A-Za-z0-9]+(?:\|[^>]*)?>|@[A-Za-z0-9_]+)[\s,:]*)+")
_COMMAND = re.compile(r"^/([A-Za-z][A-Za-z0-9_-]*)(?:@[A-Za-z0-9_]+)?(?:\s+(.*))?$", re.S)

COMMANDS = ("new", "status", "models", "model", "help", "connect", "start")

HELP = (
    "Commands:\n"
    "/new — start a new conversation\n"
    "/status — the current conversation and model\n"
    "/models — the models you can use\n"
    "/model NAME — use that model in this conversation\n"
    "/connect CODE — link this chat account to your Pronghorn user\n"
    "/help — this text\n"
    "Anything else is a message to the agent."
)


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    arg: str


def strip_mentions(text: str) -> str:
    return _MENTION.sub("", text, count=1).strip()


def parse(text: str) -> Command | None:
    """A known command at the very start of the (mention-stripped) text, else None (an
    unknown `/word` is chat text)."""
    m = _COMMAND.match(text.strip())
    if m is None or m.group(1).lower() not in COMMANDS:
        return None
    return Command(m.group(1).lower(), (m.group(2) or "").strip())
