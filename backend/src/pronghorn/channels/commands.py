"""Chat commands: parsing (leading mentions stripped, `/cmd@bot` accepted) and the help."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Slack `<@U123>`, Telegram/Discord `@name`, at the start, with separators after it.
_MENTION = re.compile(r"^(?:\s*(?:<@[A-Za-z0-9]+(?:\|[^>]*)?>|@[A-Za-z0-9_]+)[\s,:]*)+")
_COMMAND = re.compile(r"^/([A-Za-z][A-Za-z0-9_-]*)(?:@[A-Za-z0-9_]+)?(?:\s+(.*))?$", re.S)

COMMANDS = ("new", "status", "models", "model", "help", "connect", "start", "memory")

HELP = (
    "Commands:\n"
    "/new — start a new conversation\n"
    "/status — the current conversation and model\n"
    "/models — the models you can use\n"
    "/model NAME — use that model in this conversation\n"
    "/memory — what the agent remembers about you\n"
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


def skill_call(text: str) -> tuple[str, str] | None:
    """`/name task` (or `/name@bot task`) as (name, task): maybe a skill's name; the
    caller checks it is one."""
    m = _COMMAND.match(text.strip())
    if m is None or m.group(1).lower() in COMMANDS:
        return None
    return m.group(1).lower(), (m.group(2) or "").strip()


def help_text(skills: Sequence[tuple[str, str]]) -> str:
    """The help, with the skills a user can ask for (`(name, description)`)."""
    if not skills:
        return HELP
    lines = [f"/{name} TASK — {_short(description)}" for name, description in skills]
    return HELP + "\n\nSkills (run a task with one):\n" + "\n".join(lines)


def _short(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
