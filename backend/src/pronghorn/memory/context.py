"""What of a user's memory the agent sees: the summaries and the most relevant facts,
corrections first, within a token budget (~4 characters a token); and keyword search."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from pronghorn.memory.records import Fact, MemoryDocument

CHARS_PER_TOKEN = 4
_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
HEADER = (
    "<memory>\nWhat you remember about this user from earlier conversations (it may be "
    "outdated: what the user says now wins). Use it when it helps; do not recite it."
)
FOOTER = "</memory>"
SUMMARY_TITLES = {
    "work_context": "Work context",
    "personal_context": "Personal context",
    "current_focus": "Current focus",
    "recent_months": "Recent months",
    "earlier_context": "Earlier context",
    "long_term_background": "Long-term background",
}


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def ranked(facts: Sequence[Fact], query: str | None) -> list[Fact]:
    """Most relevant first: the words shared with ``query``, each weighted by how rare it is
    among the facts (a word every fact has counts for little), then confidence, newest."""
    wanted = words(query or "")
    bags = {f.id: words(f.content) for f in facts}
    df = Counter(w for bag in bags.values() for w in bag & wanted)
    total = len(facts) + 1

    def key(f: Fact) -> tuple[float, float, str]:
        score = sum(math.log(total / df[w]) for w in bags[f.id] & wanted)
        return (round(score, 6), f.confidence, f.updated_at)

    return sorted(facts, key=key, reverse=True)


def search(doc: MemoryDocument, query: str, limit: int) -> list[Fact]:
    """Facts sharing a word with ``query`` (every fact for an empty query), best first."""
    wanted = words(query)
    found = [f for f in doc.facts if not wanted or wanted & words(f.content)]
    return ranked(found, query)[:limit]


def memory_context(doc: MemoryDocument, max_tokens: int, query: str | None = None) -> str:
    """The ``<memory>`` block for the system prompt ("" when there is nothing to tell)."""
    budget = max_tokens * CHARS_PER_TOKEN - len(HEADER) - len(FOOTER) - 2
    lines: list[str] = []

    def take(line: str) -> bool:
        nonlocal budget
        if len(line) + 1 > budget:
            return False
        lines.append(line)
        budget -= len(line) + 1
        return True

    corrections = ranked([f for f in doc.facts if f.category == "correction"], query)
    others = ranked([f for f in doc.facts if f.category != "correction"], query)
    if corrections and take("Corrections (always apply):"):
        for f in corrections:
            if not take(f"- {f.content}"):
                break
    for key, title in SUMMARY_TITLES.items():
        text = getattr(doc.summaries, key).summary
        if text:
            take(f"{title}: {text}")
    if others and take("Facts:"):
        for f in others:
            if not take(f"- [{f.category}] {f.content}"):
                break
    meaningful = [ln for ln in lines if not ln.endswith(":")]
    if not meaningful:
        return ""
    return "\n".join([HEADER, *lines, FOOTER])
