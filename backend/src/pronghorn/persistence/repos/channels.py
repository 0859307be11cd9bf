"""IM channels' state in SQL: chat → thread map, delivery dedupe, bindings, connect codes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.exc import IntegrityError

from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.repos.common import as_utc, new_id, now
from pronghorn.persistence.tables import (
    channel_bindings,
    channel_codes,
    channel_dedupe,
    channel_threads,
)


@dataclass(frozen=True, slots=True)
class ChatThread:
    thread_id: str
    owner_id: str | None
    model_name: str | None


@dataclass(frozen=True, slots=True)
class Binding:
    id: str
    channel: str
    external_id: str
    external_name: str
    owner_id: str
    principal: dict[str, object]
    created_at: datetime


# -- chat → thread ----------------------------------------------------------------------------


def chat_thread(conn: Connection, channel: str, chat_key: str) -> ChatThread | None:
    row = (
        conn.execute(
            select(channel_threads).where(
                channel_threads.c.channel == channel,
                channel_threads.c.chat_key == chat_key,
            )
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    return ChatThread(row["thread_id"], row["owner_id"], row["model_name"])


def set_chat_thread(
    conn: Connection,
    channel: str,
    chat_key: str,
    thread_id: str,
    owner_id: str | None,
    model_name: str | None,
) -> None:
    """Point the chat at `thread_id` (a new chat, or `/new`)."""
    ts = now()
    where = (channel_threads.c.channel == channel, channel_threads.c.chat_key == chat_key)
    found = conn.execute(
        update(channel_threads)
        .where(*where)
        .values(thread_id=thread_id, owner_id=owner_id, model_name=model_name, updated_at=ts)
    )
    if found.rowcount == 0:
        conn.execute(
            insert(channel_threads).values(
                channel=channel,
                chat_key=chat_key,
                thread_id=thread_id,
                owner_id=owner_id,
                model_name=model_name,
                created_at=ts,
                updated_at=ts,
            )
        )


def set_chat_model(conn: Connection, channel: str, chat_key: str, model: str | None) -> bool:
    found = conn.execute(
        update(channel_threads)
        .where(channel_threads.c.channel == channel, channel_threads.c.chat_key == chat_key)
        .values(model_name=model, updated_at=now())
    )
    return found.rowcount > 0


# -- dedupe -----------------------------------------------------------------------------------


def first_delivery(conn: Connection, channel: str, event_key: str, ttl_s: float) -> bool:
    """Record a delivery; False when it was seen within the TTL (a redelivery)."""
    ts = now()
    conn.execute(
        delete(channel_dedupe).where(channel_dedupe.c.seen_at < ts - timedelta(seconds=ttl_s))
    )
    try:
        with conn.begin_nested():  # a duplicate fails this savepoint only
            conn.execute(
                insert(channel_dedupe).values(channel=channel, event_key=event_key, seen_at=ts)
            )
    except IntegrityError:
        return False
    return True


# -- connect codes and bindings ---------------------------------------------------------------


def add_code(
    conn: Connection,
    *,
    code_hash: str,
    channel: str,
    owner_id: str,
    principal: Mapping[str, object],
    ttl_s: float,
) -> datetime:
    ts = now()
    expires = ts + timedelta(seconds=ttl_s)
    conn.execute(delete(channel_codes).where(channel_codes.c.expires_at < ts))
    # One live code per user and channel: asking again replaces the old one.
    conn.execute(
        delete(channel_codes).where(
            channel_codes.c.channel == channel, channel_codes.c.owner_id == owner_id
        )
    )
    conn.execute(
        insert(channel_codes).values(
            code_hash=code_hash,
            channel=channel,
            owner_id=owner_id,
            principal=principal,
            expires_at=expires,
        )
    )
    return expires


def redeem_code(
    conn: Connection, *, code_hash: str, channel: str, external_id: str, external_name: str
) -> Binding | None:
    """Use a code once: bind the platform identity to the code's user (the latest bind of
    an identity wins). None when the code is unknown, expired or for another channel."""
    ts = now()
    row = (
        (
            conn.execute(
                select(channel_codes).where(
                    channel_codes.c.code_hash == code_hash, channel_codes.c.channel == channel
                )
            )
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    conn.execute(delete(channel_codes).where(channel_codes.c.code_hash == code_hash))
    expires = as_utc(row["expires_at"])
    if expires is None or expires < ts:
        return None
    conn.execute(
        delete(channel_bindings).where(
            channel_bindings.c.channel == channel,
            channel_bindings.c.external_id == external_id,
        )
    )
    binding = Binding(
        id=new_id(),
        channel=channel,
        external_id=external_id,
        external_name=external_name[:255],
        owner_id=row["owner_id"],
        principal=_principal(row["principal"]),
        created_at=ts,
    )
    conn.execute(
        insert(channel_bindings).values(
            id=binding.id,
            channel=channel,
            external_id=external_id,
            external_name=binding.external_name,
            owner_id=binding.owner_id,
            principal=binding.principal,
            created_at=ts,
        )
    )
    return binding


def _principal(value: object) -> dict[str, object]:
    """A stored principal (JSON), copied."""
    return dict(json_object(value) or {})


def _binding(row: RowMapping) -> Binding:
    return Binding(
        id=row["id"],
        channel=row["channel"],
        external_id=row["external_id"],
        external_name=row["external_name"],
        owner_id=row["owner_id"],
        principal=_principal(row["principal"]),
        created_at=as_utc(row["created_at"]) or now(),
    )


def binding_of(conn: Connection, channel: str, external_id: str) -> Binding | None:
    row = (
        (
            conn.execute(
                select(channel_bindings).where(
                    channel_bindings.c.channel == channel,
                    channel_bindings.c.external_id == external_id,
                )
            )
        )
        .mappings()
        .first()
    )
    return _binding(row) if row is not None else None


def bindings(conn: Connection, owner_id: str | None) -> list[Binding]:
    """The bindings of a user (None: everyone's), newest first."""
    query = select(channel_bindings).order_by(channel_bindings.c.created_at.desc())
    if owner_id is not None:
        query = query.where(channel_bindings.c.owner_id == owner_id)
    rows = conn.execute(query).mappings().all()
    return [_binding(r) for r in rows]


def revoke_binding(conn: Connection, binding_id: str, owner_id: str | None) -> bool:
    """Delete a binding (of `owner_id` only, when given); False if there is none."""
    query = delete(channel_bindings).where(channel_bindings.c.id == binding_id)
    if owner_id is not None:
        query = query.where(channel_bindings.c.owner_id == owner_id)
    found = conn.execute(query)
    return found.rowcount > 0
