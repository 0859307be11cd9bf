"""`/memory` in a chat: a user's long-term memory (docs/memory.md) as a short message."""

from __future__ import annotations

from pronghorn.memory.records import MemoryDocument

MAX_FACTS = 10
MAX_CHARS = 300
LABELS = {
    "work_context": "Work",
    "personal_context": "Personal",
    "current_focus": "Current focus",
}
EMPTY = "I do not remember anything about you yet."
OFF = "Long-term memory is turned off on this gateway."


def _cut(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 1] + "…"


def memory_text(doc: MemoryDocument) -> str:
    """The summaries, then the most confident facts (Markdown)."""
    lines: list[str] = []
    for key, label in LABELS.items():
        summary = getattr(doc.summaries, key).summary
        if summary.strip():
            lines.append(f"**{label}**: {_cut(summary)}")
    facts = sorted(doc.facts, key=lambda f: f.confidence, reverse=True)
    if facts:
        lines.append(f"**Facts** ({len(facts)}):")
        lines += [f"- {_cut(f.content)}" for f in facts[:MAX_FACTS]]
        if len(facts) > MAX_FACTS:
            lines.append(f"… and {len(facts) - MAX_FACTS} more (see Settings → Memory).")
    if not lines:
        return EMPTY
    return "What I remember about you:\n" + "\n".join(lines)
