"""Signals between run managers: a cancel (or interrupt) accepted by one process reaches the
process executing the run.

Every run manager listens under its own id (`RunManager.owner`, stamped on the runs it
executes as `runs.owner`). `send` delivers a message to the listener of one id and says
whether a live one received it; `alive` asks whether anybody listens under an id. With one
process, `LocalControlBus` is a direct call; with several, `RedisControlBus`
(cluster/redis_control.py) carries the same messages over Redis pub/sub. Work distribution and
leases plug in here too: a new message kind, the same two calls.

Work distribution (scale-out) uses one more kind: `work`, sent to `BROADCAST`, which every
listener also hears — "a run may have become claimable" (cluster/claim_loop.py). It names its
`sender`, so a replica skips its own notices (it woke its own queue when it sent one).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, cast

from pronghorn.runtime.errors import Unavailable

ControlKind = Literal["cancel", "work"]

BROADCAST = "*"
"""The listener id every run manager also listens under (messages for all of them)."""


@dataclass(frozen=True, slots=True)
class ControlMessage:
    kind: ControlKind
    run_id: str
    action: str = "interrupt"  # cancel: interrupt | rollback
    sender: str = ""  # work: the run manager that sent it

    def encode(self) -> bytes:
        body = {"k": self.kind, "r": self.run_id, "a": self.action}
        if self.sender:
            body["s"] = self.sender
        return json.dumps(body).encode()

    @classmethod
    def decode(cls, raw: bytes | str) -> ControlMessage | None:
        """The message, or None for anything that is not one (logged by the caller)."""
        try:
            value: object = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        fields = cast("dict[str, object]", value)
        kind, run_id, action = fields.get("k"), fields.get("r"), fields.get("a")
        sender = fields.get("s", "")
        if not isinstance(run_id, str) or not isinstance(action, str):
            return None
        if not isinstance(sender, str):
            return None
        if kind == "cancel":
            return cls(kind="cancel", run_id=run_id, action=action)
        if kind == "work":
            return cls(kind="work", run_id=run_id, action=action, sender=sender)
        return None


ControlHandler = Callable[[ControlMessage], None]


class ControlUnavailable(Unavailable):
    """The control channel cannot be reached right now (Redis is down); retry later."""


class ControlBus(Protocol):
    async def listen(self, replica: str, handler: ControlHandler) -> None:
        """Deliver the messages sent to `replica` to `handler` (called on the event loop)
        until `aclose`; returns once listening (or, Redis being down, keeps trying)."""

    async def send(self, replica: str, message: ControlMessage) -> bool:
        """Deliver to `replica`'s listener; False when nobody listens under that id.
        Raises `ControlUnavailable` when the bus cannot be reached."""
        ...

    async def alive(self, replica: str) -> bool:
        """Whether a listener is registered under `replica` (its process is alive)."""
        ...

    async def aclose(self) -> None: ...


class LocalControlBus:
    """One process: the listeners are in this process, `send` calls them directly."""

    def __init__(self) -> None:
        self._handlers: dict[str, ControlHandler] = {}

    async def listen(self, replica: str, handler: ControlHandler) -> None:
        self._handlers[replica] = handler

    async def send(self, replica: str, message: ControlMessage) -> bool:
        if replica == BROADCAST:
            for handler in list(self._handlers.values()):
                handler(message)
            return bool(self._handlers)
        handler = self._handlers.get(replica)
        if handler is None:
            return False
        handler(message)
        return True

    async def alive(self, replica: str) -> bool:
        return replica in self._handlers

    async def aclose(self) -> None:
        self._handlers.clear()
