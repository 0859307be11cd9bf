"""Markdown (what the agent writes) → each platform's message format, and splitting long
text into messages a platform accepts.

Only the Markdown a chat answer really uses is converted: fenced and inline code, bold,
italics, links and headings. Everything else passes as text, escaped for the target.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)


def _protect(
    text: str, pattern: re.Pattern[str], wrap: Callable[[str], str], slots: list[str]
) -> str:
    def keep(m: re.Match[str]) -> str:
        slots.append(wrap(m.group(1)))
        return f"\x00{len(slots) - 1}\x00"

    return pattern.sub(keep, text)


def _restore(text: str, slots: list[str]) -> str:
    return re.sub(r"\x00(\d+)\x00", lambda m: slots[int(m.group(1))], text)


def telegram_html(markdown: str) -> str:
    """Telegram's `parse_mode: HTML` (tags b, i, code, pre, a; everything else escaped)."""
    slots: list[str] = []
    text = _protect(
        markdown, _FENCE, lambda c: f"<pre>{html.escape(c.rstrip(chr(10)))}</pre>", slots
    )
    text = _protect(text, _INLINE_CODE, lambda c: f"<code>{html.escape(c)}</code>", slots)
    text = html.escape(text, quote=False)
    text = _LINK.sub(
        lambda m: f'<a href="{m.group(2).replace(chr(34), "&quot;")}">{m.group(1)}</a>', text
    )
    text = _HEADING.sub(lambda m: f"<b>{m.group(1)}</b>", text)
    text = _BOLD.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", text)
    text = _ITALIC.sub(lambda m: f"<i>{m.group(1)}</i>", text)
    return _restore(text, slots)


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_mrkdwn(markdown: str) -> str:
    """Slack's mrkdwn (*bold*, _italic_, `code`, ```pre```, <url|text>; &<> escaped)."""
    slots: list[str] = []
    text = _protect(markdown, _FENCE, lambda c: f"```{_slack_escape(c.rstrip(chr(10)))}```", slots)
    text = _protect(text, _INLINE_CODE, lambda c: f"`{_slack_escape(c)}`", slots)
    text = _slack_escape(text)
    text = _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", text)
    text = _ITALIC.sub(lambda m: f"_{m.group(1)}_", text)
    text = _HEADING.sub(lambda m: f"*{m.group(1)}*", text)
    text = _BOLD.sub(lambda m: f"*{m.group(1) or m.group(2)}*", text)
    return _restore(text, slots)


def split_text(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at a paragraph, line, or word
    boundary when one is near; a code fence cut in two is closed and reopened."""
    if limit < 16:
        raise ValueError("limit too small")
    pieces: list[str] = []
    rest = text
    budget = limit - 8  # room to close and reopen a fence
    while len(rest) > limit:
        cut = _cut_at(rest, budget)
        head, rest = rest[:cut].rstrip(), rest[cut:].lstrip("\n")
        if head.count("```") % 2 == 1:  # inside a fence: close it here, reopen after
            head += "\n```"
            rest = "```\n" + rest
        pieces.append(head)
    if rest.strip() or not pieces:
        pieces.append(rest)
    return pieces


def _cut_at(text: str, budget: int) -> int:
    window = text[:budget]
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at >= budget // 2:
            return at + len(sep)
    return budget


def fit(markdown: str, limit: int, render: Callable[[str], str]) -> list[str]:
    """The markdown rendered for a platform, in messages of at most `limit` characters
    (escaping can make a piece grow: then the pieces are cut smaller)."""
    budget = limit
    while True:
        pieces = [render(p) for p in split_text(markdown, budget)]
        if all(len(p) <= limit for p in pieces) or budget <= 64:
            return [p[:limit] for p in pieces]
        budget = budget * 3 // 4
