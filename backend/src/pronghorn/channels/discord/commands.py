"""Discord's slash commands: the ones the bot registers, and how an interaction is
acknowledged."""

from __future__ import annotations

from pronghorn.channels.wire import WireDict

EPHEMERAL = 1 << 6  # message flag: only the interaction's user sees it
PRIVATE_COMMANDS = {"connect"}
NOT_HERE = "I do not answer in this channel."

_TEXT = 3  # application command option type STRING


def _option(name: str, description: str) -> WireDict:
    return {"type": _TEXT, "name": name, "description": description, "required": True}


SLASH_COMMANDS: list[WireDict] = [
    {
        "name": "ask",
        "description": "Ask the agent",
        "options": [_option("message", "What to ask")],
    },
    {"name": "new", "description": "Start a new conversation"},
    {"name": "status", "description": "The current conversation and model"},
    {"name": "models", "description": "The models you can use"},
    {
        "name": "model",
        "description": "Use a model in this conversation",
        "options": [_option("name", "The model's name (see /models)")],
    },
    {
        "name": "connect",
        "description": "Link this Discord account to your Pronghorn user",
        "options": [_option("code", "The code Pronghorn gave you")],
    },
    {"name": "help", "description": "What the bot can do"},
]


def deferred(command: str) -> WireDict:
    """The interaction callback: DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE; the answers to
    private commands (`/connect`) are ephemeral (only the user sees them)."""
    if command in PRIVATE_COMMANDS:
        return {"type": 5, "data": {"flags": EPHEMERAL}}
    return {"type": 5}
