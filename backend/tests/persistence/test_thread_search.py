"""Thread search on SQLite (FTS5) and PostgreSQL (tsvector): titles and message text, every
word as a prefix, only the owner's threads, renames and new messages seen at the next
search, deleted threads gone, paging, and a few thousand threads."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import thread_search as repo
from pronghorn.persistence.repos import threads


def _messages(*texts: str) -> dict[str, Any]:
    kinds = ["human", "ai"]
    return {
        "messages": [
            {"type": kinds[i % 2], "id": str(i), "content": t} for i, t in enumerate(texts)
        ]
    }


async def _thread(db: Database, owner: str, values: dict[str, Any], **metadata: Any) -> str:
    tid = str(uuid.uuid4())

    def unit(conn: Connection):
        threads.insert_thread(conn, tid, owner_id=owner, metadata=metadata)
        threads.set_fields(conn, tid, values=values)

    await db.write(unit)
    return tid


async def _search(db: Database, q: str, owner: str | None = "alice", **page: int) -> list[str]:
    await db.write(lambda conn: repo.refresh(conn, owner))
    found = await db.read(
        lambda conn: repo.search(
            conn, repo.words(q), owner, page.get("limit", 50), page.get("offset", 0)
        )
    )
    return [t.thread_id for t in found]


async def test_titles_and_message_text_are_found(db: Database) -> None:
    hawks = await _thread(db, "alice", {"title": "Hawk migration", **_messages("hi", "ok")})
    text = await _thread(db, "alice", _messages("Where do pronghorns winter?", "In Wyoming."))
    blocks = await _thread(
        db,
        "alice",
        {"messages": [{"type": "ai", "content": [{"type": "text", "text": "Café au lait"}]}]},
    )
    tool_only = await _thread(
        db, "alice", {"messages": [{"type": "tool", "content": "secret wyoming tool output"}]}
    )
    assert await _search(db, "hawk") == [hawks]
    assert await _search(db, "MIGRAT") == [hawks]  # a prefix, any case
    assert await _search(db, "pronghorns wyoming") == [text]  # every word, across messages
    assert await _search(db, "pronghorns hawk") == []
    assert await _search(db, "cafe") == [blocks]  # accents ignored
    assert tool_only not in await _search(db, "wyoming")  # tool output is not indexed
    assert await _search(db, "'\" OR 1=1 -- *") == []  # query syntax is not passed through


async def test_only_the_owners_threads_unless_all(db: Database) -> None:
    mine = await _thread(db, "alice", {"title": "Budget 2027"})
    theirs = await _thread(db, "bob", {"title": "Budget 2027 too"})
    assert await _search(db, "budget") == [mine]
    assert await _search(db, "budget", owner="bob") == [theirs]
    assert set(await _search(db, "budget", owner=None)) == {mine, theirs}  # an admin's "all"


async def test_renames_new_messages_and_deletes_are_seen(db: Database) -> None:
    tid = await _thread(db, "alice", {"title": "Old name", **_messages("about otters")})
    assert await _search(db, "otters") == [tid]

    def unit(conn: Connection):
        threads.update_thread(conn, tid, metadata={"title": "Renamed beavers"})
        threads.set_fields(conn, tid, values={"title": "Old name", **_messages("salmon")})

    await db.write(unit)
    assert await _search(db, "beavers") == [tid]  # a rename wins over the agent's title
    assert await _search(db, "salmon") == [tid]
    assert await _search(db, "otters") == []
    await db.write(lambda conn: threads.delete_thread(conn, tid))
    assert await _search(db, "salmon") == []


async def test_title_matches_rank_first_and_pages(db: Database) -> None:
    body = [
        await _thread(db, "alice", _messages(f"we talked about kestrels {i}")) for i in range(3)
    ]
    title = await _thread(db, "alice", {"title": "Kestrels", **_messages("hello")})
    found = await _search(db, "kestrels")
    assert found[0] == title and set(found) == {title, *body}
    first = await _search(db, "kestrels", limit=2)
    second = await _search(db, "kestrels", limit=2, offset=2)
    assert first + second == found


async def test_thousands_of_threads(db: Database) -> None:
    rows = [str(uuid.uuid4()) for _ in range(3000)]

    def step1(conn: Connection):
        for i, tid in enumerate(rows):
            threads.insert_thread(conn, tid, owner_id="alice")
            threads.set_fields(
                conn, tid, values={"title": f"chat {i}", **_messages(f"note number n{i}x")}
            )

    await db.write(step1)
    assert await _search(db, "n2999x") == [rows[2999]]
    assert len(await _search(db, "chat", limit=100)) == 100

    def step2(conn: Connection):
        assert repo.refresh(conn, "alice") == 0  # nothing changed: nothing re-read

    await db.write(step2)
