"""The IM channels' state as a service: delivery dedupe, connect codes and bindings, and the
chat → thread map (a chat's thread is created by the threads service, as `POST /threads`
creates one, in the same transaction as the mapping). The dispatcher and the channels
router call this; neither reaches the repositories.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, cast

from sqlalchemy.engine import Connection

from pronghorn.auth.principal import Principal
from pronghorn.persistence.records.threads import ThreadRecord
from pronghorn.persistence.repos import channels as repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.repos.channels import Binding, ChatThread
from pronghorn.runtime.access import Access
from pronghorn.runtime.services import threads
from pronghorn.runtime.services.threads import NewThread

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

__all__ = ["Binding", "ChannelState", "ChatThread", "ChatThreadView"]


@dataclass(frozen=True, slots=True)
class ChatThreadView:
    """A chat's thread as the dispatcher needs it for the next message: its id and model,
    whether a run holds it, the interrupts waiting (by task) and the artifacts it has."""

    thread_id: str
    model_name: str | None
    busy: bool = False
    interrupts: Mapping[str, object] = field(default_factory=dict[str, object])
    artifacts: frozenset[str] = frozenset()


def _view(model: str | None, thread: ThreadRecord) -> ChatThreadView:
    values = thread.values
    before = (
        cast(Mapping[str, object], values).get("artifacts") if isinstance(values, dict) else None
    )
    return ChatThreadView(
        thread_id=thread.thread_id,
        model_name=model,
        busy=thread.status == "busy",
        interrupts=thread.interrupts,
        artifacts=frozenset(str(a) for a in cast(list[object], before))
        if isinstance(before, list)
        else frozenset(),
    )


class ChannelState:
    """One runtime's channel state (its database and authorizer)."""

    def __init__(self, runtime: AppRuntime) -> None:
        self.runtime = runtime

    # -- dedupe -----------------------------------------------------------------------------

    async def first_delivery(self, channel: str, delivery_id: str, ttl_s: float) -> bool:
        """Record a delivery; False when it was seen within the TTL (a redelivery)."""
        return await self.runtime.db.write(
            lambda conn: repo.first_delivery(conn, channel, delivery_id, ttl_s)
        )

    # -- connect codes and bindings ---------------------------------------------------------

    async def add_code(
        self,
        *,
        code_hash: str,
        channel: str,
        owner_id: str,
        principal: dict[str, object],
        ttl_s: float,
    ) -> datetime:
        """A one-time code (its hash) for `owner_id` on `channel`; replaces their last one.
        Returns when it expires."""
        return await self.runtime.db.write(
            lambda conn: repo.add_code(
                conn,
                code_hash=code_hash,
                channel=channel,
                owner_id=owner_id,
                principal=dict(principal),
                ttl_s=ttl_s,
            )
        )

    async def redeem_code(
        self, *, code_hash: str, channel: str, external_id: str, external_name: str
    ) -> Binding | None:
        """Use a code once: bind the chat account to the code's user (None: no such code)."""
        return await self.runtime.db.write(
            lambda conn: repo.redeem_code(
                conn,
                code_hash=code_hash,
                channel=channel,
                external_id=external_id,
                external_name=external_name,
            )
        )

    async def binding_of(self, channel: str, external_id: str) -> Binding | None:
        return await self.runtime.db.read(lambda conn: repo.binding_of(conn, channel, external_id))

    async def bindings(self, owner_id: str | None) -> list[Binding]:
        """The bindings of `owner_id` (every user's for None)."""
        return await self.runtime.db.read(lambda conn: repo.bindings(conn, owner_id))

    async def revoke_binding(self, binding_id: str, owner_id: str | None) -> bool:
        return await self.runtime.db.write(
            lambda conn: repo.revoke_binding(conn, binding_id, owner_id)
        )

    # -- chat -> thread ---------------------------------------------------------------------

    async def chat_thread(self, channel: str, chat_key: str) -> ChatThread | None:
        return await self.runtime.db.read(lambda conn: repo.chat_thread(conn, channel, chat_key))

    async def set_chat_model(self, channel: str, chat_key: str, model: str | None) -> bool:
        """Set the chat's model; False when the chat has no thread yet."""
        return await self.runtime.db.write(
            lambda conn: repo.set_chat_model(conn, channel, chat_key, model)
        )

    async def new_thread(
        self, channel: str, chat_key: str, principal: Principal, model: str | None
    ) -> str:
        """A new thread of `principal` for the chat, created as `POST /threads` creates one
        (the authorizer may stamp its metadata or refuse: `Forbidden`), mapped to the chat
        in the same transaction."""
        new = NewThread(metadata={"channel": channel, "chat": chat_key})

        def map_chat(conn: Connection, thread: ThreadRecord) -> None:
            repo.set_chat_thread(conn, channel, chat_key, thread.thread_id, thread.owner_id, model)

        thread = await threads.create_with(self.runtime, Access(principal), new, map_chat)
        return thread.thread_id

    async def thread_for(self, channel: str, chat_key: str, principal: Principal) -> ChatThreadView:
        """The chat's thread; a new one when it has none, or when it is gone or someone
        else's (the chat keeps its model)."""
        current = await self.chat_thread(channel, chat_key)
        if current is not None and current.owner_id == principal.identity:
            thread = await self.runtime.db.read(
                lambda conn: threads_repo.get_row(conn, current.thread_id)
            )
            if thread is not None:
                return _view(current.model_name, thread)
        model = current.model_name if current else None
        return ChatThreadView(await self.new_thread(channel, chat_key, principal, model), model)
