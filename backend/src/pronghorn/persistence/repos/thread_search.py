"""Full-text search over threads: their title and the text of their messages.

The index (`thread_search`, migration 0010: SQLite FTS5 with an external-content table,
PostgreSQL a generated, weighted tsvector with a GIN index) is brought up to date from the
`threads` table when a search runs: each thread's row carries a stamp of the thread's
`updated_at` and `state_updated_at`, so only threads changed since they were last indexed
are read again, and nothing on the write paths of threads has to know about it. A search
sees the titles and messages as of its own start.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import cast

from sqlalchemy import select, text
from sqlalchemy.engine import Connection

from pronghorn.persistence.records.threads import ThreadRecord
from pronghorn.persistence.repos.threads import record_of
from pronghorn.persistence.tables import threads

MAX_BODY_CHARS = 200_000
MAX_WORDS = 8
BATCH = 200
_WORD = re.compile(r"\w+", re.UNICODE)

_UPSERT = text(
    "INSERT INTO thread_search (thread_id, owner_id, stamp, title, body) "
    "VALUES (:thread_id, :owner_id, :stamp, :title, :body) "
    "ON CONFLICT (thread_id) DO UPDATE SET owner_id = excluded.owner_id, "
    "stamp = excluded.stamp, title = excluded.title, body = excluded.body"
)
_ORPHANS = text(
    "DELETE FROM thread_search WHERE NOT EXISTS "
    "(SELECT 1 FROM threads t WHERE t.thread_id = thread_search.thread_id)"
)


def fold(text: str) -> str:
    """Lower case without accents (``Café`` → ``cafe``), as indexed and as searched, the
    same on both databases (PostgreSQL's `simple` configuration keeps accents)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words(query: str) -> list[str]:
    """The words searched for (letters, digits, underscore), folded, at most 8."""
    return _WORD.findall(fold(query))[:MAX_WORDS]


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in cast(list[object], content):
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping):
                b = cast(Mapping[str, object], block)
                if b.get("type") == "text" and isinstance(b.get("text"), str):
                    parts.append(cast(str, b["text"]))
        return "\n".join(parts)
    return ""


def title_of(metadata: Mapping[str, object] | None, values: Mapping[str, object] | None) -> str:
    """A rename (`metadata.title`) wins over the agent's `values.title`, as in the UI."""
    for source in (metadata or {}, values or {}):
        title = source.get("title")
        if isinstance(title, str) and title.strip():
            return title.strip()
    return ""


def body_of(values: Mapping[str, object] | None) -> str:
    """The text of the human and AI messages (tool output is left out), capped."""
    messages = (values or {}).get("messages")
    if not isinstance(messages, list):
        return ""
    out: list[str] = []
    size = 0
    for message in cast(list[object], messages):
        if not isinstance(message, Mapping):
            continue
        m = cast(Mapping[str, object], message)
        if m.get("type") not in ("human", "ai"):
            continue
        piece = _content_text(m.get("content"))
        if piece:
            out.append(piece)
            size += len(piece)
            if size >= MAX_BODY_CHARS:
                break
    return "\n".join(out)[:MAX_BODY_CHARS]


def _stamp(updated_at: object, state_updated_at: object) -> str:
    return f"{updated_at}|{state_updated_at}"[:80]


def refresh(conn: Connection, owner_id: str | None) -> int:
    """Index the threads of `owner_id` (every owner's for None) that changed since they
    were indexed; drop the entries of deleted threads. The number (re)indexed."""
    where = "" if owner_id is None else "WHERE t.owner_id = :owner"
    rows = (
        conn.execute(
            text(
                "SELECT t.thread_id, t.updated_at, t.state_updated_at, s.stamp "
                "FROM threads t LEFT JOIN thread_search s ON s.thread_id = t.thread_id " + where
            ),
            {"owner": owner_id} if owner_id is not None else {},
        )
    ).all()
    stale = {
        r.thread_id: _stamp(r.updated_at, r.state_updated_at)
        for r in rows
        if r.stamp != _stamp(r.updated_at, r.state_updated_at)
    }
    ids = list(stale)
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        found = conn.execute(
            select(
                threads.c.thread_id, threads.c.owner_id, threads.c.metadata, threads.c["values"]
            ).where(threads.c.thread_id.in_(batch))
        )
        docs = [
            {
                "thread_id": r["thread_id"],
                "owner_id": r["owner_id"],
                "stamp": stale[r["thread_id"]],
                "title": fold(title_of(r["metadata"], r["values"])),
                "body": fold(body_of(r["values"])),
            }
            for r in found.mappings()
        ]
        if docs:
            conn.execute(_UPSERT, docs)
    conn.execute(_ORPHANS)
    return len(ids)


def search(
    conn: Connection, query: Sequence[str], owner_id: str | None, limit: int, offset: int
) -> list[ThreadRecord]:
    """The threads whose title or messages hold every word of `query` (as a word prefix),
    best match first (a title match weighs more), then the most recently updated."""
    if not query:
        return []
    owner = "" if owner_id is None else " AND t.owner_id = :owner"
    params: dict[str, object] = {"limit": limit, "offset": offset}
    if owner_id is not None:
        params["owner"] = owner_id
    if conn.dialect.name == "postgresql":
        params["q"] = " & ".join(f"{w}:*" for w in query)
        sql = (
            "SELECT s.thread_id FROM thread_search s "
            "JOIN threads t ON t.thread_id = s.thread_id "
            "WHERE s.doc @@ to_tsquery('simple', :q)" + owner + " "
            "ORDER BY ts_rank(s.doc, to_tsquery('simple', :q)) DESC, t.updated_at DESC, "
            "t.thread_id LIMIT :limit OFFSET :offset"
        )
    else:
        params["q"] = " ".join(f'"{w}"*' for w in query)
        sql = (
            "SELECT s.thread_id FROM thread_search_fts "
            "JOIN thread_search s ON s.rowid = thread_search_fts.rowid "
            "JOIN threads t ON t.thread_id = s.thread_id "
            "WHERE thread_search_fts MATCH :q" + owner + " "
            "ORDER BY bm25(thread_search_fts, 4.0, 1.0), t.updated_at DESC, t.thread_id "
            "LIMIT :limit OFFSET :offset"
        )
    ids = [r.thread_id for r in (conn.execute(text(sql), params)).all()]
    if not ids:
        return []
    found = conn.execute(select(threads).where(threads.c.thread_id.in_(ids)))
    by_id = {r["thread_id"]: record_of(r) for r in found.mappings()}
    return [by_id[i] for i in ids if i in by_id]
