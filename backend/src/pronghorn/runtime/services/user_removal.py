"""Deleting a user and everything Pronghorn keeps for them.

In order, so nothing new can start while the rest goes: the account is disabled and its
sessions end; its threads are purged (runs cancelled, checkpoints and files deleted), then
its crons and assistants (custom agents); its memory (every agent's) and its store items;
its IM bindings, connect codes, chat mappings, skill switches and idempotency keys; its
folder under the data dir; last the account itself (API keys go with it). The audit log
keeps what happened, as history.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import Connection

from pronghorn.auth.errors import AccountError
from pronghorn.persistence.repos import assistants as assistants_repo
from pronghorn.persistence.repos import crons as crons_repo
from pronghorn.persistence.repos import owners as owners_repo
from pronghorn.persistence.repos import sessions as sessions_repo
from pronghorn.persistence.repos import users as users_repo
from pronghorn.runtime.services.store_scope import USER_ROOT, owner_label
from pronghorn.runtime.services.thread_sweeper import purge_thread
from pronghorn.sandbox.paths import user_folder

if TYPE_CHECKING:
    from pronghorn.persistence.repos.users import User
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


@dataclass(frozen=True, slots=True)
class Removed:
    """What went with the user (counts), for the audit line and the answer."""

    threads: int
    crons: int
    assistants: int
    memory_documents: int
    store_items: int

    def to_json(self) -> dict[str, int]:
        return {
            "threads": self.threads,
            "crons": self.crons,
            "assistants": self.assistants,
            "memory_documents": self.memory_documents,
            "store_items": self.store_items,
        }


async def remove_user(runtime: AppRuntime, user_id: str) -> tuple[User, Removed]:
    """Delete the user and everything of theirs; 404 if unknown, 409 for the last enabled
    admin."""

    def disable(conn: Connection) -> User:
        user = users_repo.get(conn, user_id)
        if user is None:
            raise AccountError(f"User with ID {user_id} not found", 404)
        if user.is_admin and not user.disabled and users_repo.count_admins(conn) <= 1:
            raise AccountError("Refused: this is the last enabled admin", 409)
        users_repo.update_user(conn, user_id, disabled=True)
        sessions_repo.delete_for_user(conn, user_id)
        return user

    user = await runtime.db.write(disable)
    thread_ids = await runtime.db.read(lambda conn: owners_repo.thread_ids(conn, user_id))
    for thread_id in thread_ids:
        await purge_thread(runtime, thread_id)

    def delete_owned(conn: Connection) -> tuple[list[str], list[str]]:
        cron_ids = owners_repo.cron_ids(conn, user_id)
        for cron_id in cron_ids:
            crons_repo.delete_cron(conn, cron_id)
        assistant_ids = owners_repo.assistant_ids(conn, user_id)
        for assistant_id in assistant_ids:
            assistants_repo.delete_assistant(conn, assistant_id)
        return cron_ids, assistant_ids

    cron_ids, assistant_ids = await runtime.db.write(delete_owned)
    documents = await runtime.memory.forget_user(user_id) if runtime.is_started("memory") else 0
    items = await _delete_store_items(runtime, (USER_ROOT, owner_label(user_id)))

    def forget(conn: Connection) -> None:
        owners_repo.forget_links(conn, user_id)
        users_repo.delete_user(conn, user_id)

    await runtime.db.write(forget)
    await asyncio.to_thread(_remove_folder, runtime.data_dir / "users" / user_folder(user_id))
    return user, Removed(len(thread_ids), len(cron_ids), len(assistant_ids), documents, items)


async def _delete_store_items(runtime: AppRuntime, prefix: tuple[str, ...]) -> int:
    """Delete every store item under the prefix, page by page."""
    deleted = 0
    while True:
        page = await runtime.store.asearch(prefix, limit=100)
        if not page:
            return deleted
        for item in page:
            await runtime.store.adelete(item.namespace, item.key)
        deleted += len(page)


def _remove_folder(folder: Path) -> None:
    """The user's folder (rmtree never follows a link inside it; a link in its place is
    only unlinked)."""
    if folder.is_symlink():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)
