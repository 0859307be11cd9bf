"""Request notes: user-role messages a harness adds to one model request only.

Some content can only travel in a user message (images, for most providers), so the agent
appends one to a request (see ``agent/middlewares/viewed_images.py``). Such a message is
not a turn of the user: code that looks for "the last user message" (the current turn of
a tool loop, a scripted model's rules, loop detection) skips it. It is marked by
``additional_kwargs[NOTE_KEY]``.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage

NOTE_KEY = "pronghorn_request_note"


def is_request_note(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and bool(message.additional_kwargs.get(NOTE_KEY))


def is_user_turn(message: BaseMessage) -> bool:
    """A human message that the user wrote (not a request note)."""
    return isinstance(message, HumanMessage) and not is_request_note(message)
