"""Feishu / Lark message bodies: the interactive card a reply streams in (one `markdown`
element, `update_multi` so an in-place PATCH shows for everyone), Markdown → the card's
Markdown dialect, and the text of inbound `text` / `post` messages.

Card Markdown knows bold, italics, strikethrough, links, lists and code, but not headings
(they become bold lines) and it reads `<…>` as tags (`at`, `font`…): outside code, `<`, `>`
and `&` are written as entities.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import cast

from pronghorn.channels.wire import WireMap, as_map

_CODE = re.compile(r"(```[^\n`]*\n.*?(?:```|\Z)|`[^`\n]+`)", re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)


def card_markdown(markdown: str) -> str:
    """The agent's Markdown as a card `markdown` element's content."""
    out: list[str] = []
    for i, part in enumerate(_CODE.split(markdown)):
        if i % 2 == 1:  # a code span or fence: as written
            out.append(part)
            continue
        text = part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        out.append(_HEADING.sub(lambda m: f"**{m.group(1)}**", text))
    return "".join(out)


def card(content: str) -> str:
    """The `content` of an `interactive` message holding `content` (card Markdown)."""
    body = {
        "config": {"wide_screen_mode": True, "update_multi": True},
        "elements": [{"tag": "markdown", "content": content}],
    }
    return json.dumps(body, ensure_ascii=False)


def post_text(content: WireMap, mentions: Mapping[str, str]) -> tuple[str, list[str]]:
    """A `post` (rich text) message as plain text, and the image keys it holds.

    The content is `{"title", "content": [[element…]…]}`, sometimes wrapped in a language
    key (`{"zh_cn": {...}}`); `at` elements name a mention key (`@_user_1`), replaced by
    `mentions` (the bot's own by nothing)."""
    body = content
    if "content" not in body:
        for value in body.values():
            if isinstance(value, Mapping) and "content" in value:
                body = cast(WireMap, value)
                break
    lines: list[str] = []
    title = str(body.get("title") or "").strip()
    if title:
        lines.append(title)
    images: list[str] = []
    paragraphs = body.get("content")
    for paragraph in cast(list[object], paragraphs if isinstance(paragraphs, list) else []):
        line: list[str] = []
        for raw in cast(list[object], paragraph if isinstance(paragraph, list) else []):
            el = as_map(raw)
            tag = el.get("tag")
            if tag in ("text", "md"):
                line.append(str(el.get("text") or ""))
            elif tag == "a":
                text, href = str(el.get("text") or ""), str(el.get("href") or "")
                line.append(f"[{text}]({href})" if href and text != href else text or href)
            elif tag == "at":
                key = str(el.get("user_id") or "")
                line.append(mentions.get(key, f"@{el.get('user_name') or key}"))
            elif tag == "code_block":
                line.append(f"```{el.get('language') or ''}\n{el.get('text') or ''}\n```")
            elif tag == "img" and el.get("image_key"):
                images.append(str(el["image_key"]))
        lines.append("".join(line))
    return "\n".join(lines).strip(), images


def mention_text(text: str, mentions: Mapping[str, str]) -> str:
    """A `text` message with its mention keys (`@_user_1`) replaced by `mentions`."""
    for key in sorted(mentions, key=len, reverse=True):  # @_user_10 before @_user_1
        text = text.replace(key, mentions[key])
    return re.sub(r"[ \t]{2,}", " ", text).strip()
