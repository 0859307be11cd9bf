"""HTML → readable plain text (markdown-ish) with the standard library's HTMLParser.

Scripts, styles and other non-content elements are dropped; block elements become line
breaks, headings get ``#`` marks, list items ``- ``, links ``[text](url)``; ``<pre>`` keeps
its whitespace.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = {"script", "style", "noscript", "template", "svg", "iframe", "object", "head", "canvas"}
_BLOCK = {
    "address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "header", "hr", "main", "nav", "ol", "p",
    "section", "table", "tr", "ul", "br", "li", "pre", "h1", "h2", "h3", "h4", "h5", "h6",
    "caption", "summary", "details",
}  # fmt: skip
_PRE_SPACE = "\x01"
_PRE_NL = "\x02"
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source"}


class _Extractor(HTMLParser):
    def __init__(self, base_url: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.title: list[str] = []
        self._skip_depth = 0
        self._in_title = False
        self._pre = 0
        self._links: list[tuple[int, str | None]] = []

    def _newline(self, n: int = 1) -> None:
        self.out.append("\n" * n)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
            return
        if tag in _SKIP:
            if tag not in _VOID:
                self._skip_depth += 1
            return
        if self._skip_depth:
            return
        if tag in _BLOCK:
            self._newline(2 if tag in {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre"} else 1)
        if tag in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            self.out.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            self.out.append("- ")
        elif tag == "pre":
            self._pre += 1
        elif tag in {"td", "th"}:
            self.out.append(" | ")
        elif tag == "a":
            href = dict(attrs).get("href")
            self._links.append((len(self.out), href))
        elif tag == "img":
            alt = (dict(attrs).get("alt") or "").strip()
            if alt:
                self.out.append(f"[image: {alt}]")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if tag in _SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if self._skip_depth:
            return
        if tag == "pre":
            self._pre = max(0, self._pre - 1)
        if tag == "a" and self._links:
            start, href = self._links.pop()
            text = "".join(self.out[start:]).strip()
            url = _link_target(href, self.base_url)
            if text and url:
                self.out[start:] = [f"[{' '.join(text.split())}]({url})"]
        if tag in _BLOCK and tag != "li":
            self._newline(2 if tag in {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre"} else 1)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
            return
        if self._skip_depth:
            return
        if self._pre:  # protected from the whitespace clean-up below; restored at the end
            self.out.append(data.replace(" ", _PRE_SPACE).replace("\n", _PRE_NL))
        else:
            self.out.append(re.sub(r"\s+", " ", data))


def _link_target(href: str | None, base_url: str | None) -> str | None:
    if not href:
        return None
    href = href.strip()
    if href.startswith(("#", "javascript:", "mailto:", "data:")):
        return None
    url = urljoin(base_url, href) if base_url else href
    return url if url.startswith(("http://", "https://")) else None


def html_to_text(html: str, base_url: str | None = None) -> str:
    """Readable text of an HTML document; the ``<title>`` (if any) comes first."""
    parser = _Extractor(base_url)
    try:
        parser.feed(html.replace(_PRE_SPACE, "").replace(_PRE_NL, ""))
        parser.close()
    except Exception:  # HTMLParser is lenient; never let odd markup fail a fetch
        pass
    text = "".join(parser.out)
    lines = [line.strip() for line in text.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    text = text.replace(_PRE_SPACE, " ").replace(_PRE_NL, "\n")
    title = " ".join("".join(parser.title).split())
    return f"# {title}\n\n{text}" if title and title not in text[:200] else text
