"""``fetch_url``: an SSRF-safe GET for the ``web_fetch`` tool.

Every hop (the URL and each redirect, at most :data:`MAX_REDIRECTS`) is vetted by
:func:`~pronghorn.web.ssrf.vet_url`; the request then goes to the vetted IP address itself
while the ``Host`` header and the TLS SNI / certificate check keep the original host name.
The body is streamed and reading stops at ``fetch_max_bytes``; the whole fetch (all hops) is
bounded by ``fetch_timeout_s``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from pronghorn.config.schema.app import WebToolsConfig
from pronghorn.web.html_text import html_to_text
from pronghorn.web.ssrf import (
    BlockedURLError,
    FetchError,
    Resolver,
    pinned_request,
    vet_url,
)

MAX_REDIRECTS = 5
USER_AGENT = "Mozilla/5.0 (compatible; Pronghorn-WebFetch/0.1)"
_REDIRECTS = {301, 302, 303, 307, 308}
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript")

__all__ = ["MAX_REDIRECTS", "BlockedURLError", "FetchError", "FetchResult", "fetch_url"]


@dataclass(frozen=True, slots=True)
class FetchResult:
    url: str
    final_url: str
    status: int
    content_type: str
    text: str
    truncated: bool


def _is_text(content_type: str) -> bool:
    ct = content_type.lower()
    return ct.startswith(_TEXT_TYPES) or ct.endswith(("+json", "+xml"))


def _render(body: bytes, content_type: str, charset: str | None, url: str) -> str:
    ct = content_type.split(";", 1)[0].strip().lower()
    head = body[:1024].lstrip().lower()
    looks_html = head.startswith((b"<!doctype html", b"<html"))
    if ct and not _is_text(ct) and ct != "application/xhtml+xml":
        return f"[{ct} content, {len(body)} bytes: not shown as text]"
    if not ct and b"\x00" in body[:8192]:
        return f"[binary content, {len(body)} bytes: not shown as text]"
    try:
        text = body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    if ct in ("text/html", "application/xhtml+xml") or (not ct and looks_html):
        return html_to_text(text, base_url=url)
    return text


async def _read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        if size + len(chunk) > limit:  # stop reading: the rest is never downloaded
            chunks.append(chunk[: limit - size])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


async def _fetch(
    url: str,
    config: WebToolsConfig,
    client: httpx.AsyncClient,
    resolver: Resolver | None,
) -> FetchResult:
    try:
        current = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError) as exc:
        raise FetchError(f"Invalid URL {url!r}: {exc}") from None
    for _hop in range(MAX_REDIRECTS + 1):
        ip = await vet_url(current, allow_private=config.allow_private_addresses, resolver=resolver)
        target, headers, extensions = pinned_request(current, ip)
        headers["User-Agent"] = USER_AGENT
        request = client.build_request("GET", target, headers=headers, extensions=extensions)
        try:
            response = await client.send(request, stream=True, follow_redirects=False)
        except httpx.HTTPError as exc:
            raise FetchError(f"Could not fetch {current}: {type(exc).__name__}: {exc}") from None
        try:
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                try:
                    current = current.join(location)
                except httpx.InvalidURL as exc:
                    raise FetchError(f"Bad redirect location {location!r}: {exc}") from None
                continue
            try:
                body, truncated = await _read_capped(response, config.fetch_max_bytes)
            except httpx.HTTPError as exc:
                raise FetchError(f"Error reading {current}: {type(exc).__name__}") from None
            content_type = response.headers.get("content-type", "")
            return FetchResult(
                url=url,
                final_url=str(current),
                status=response.status_code,
                content_type=content_type,
                text=_render(body, content_type, response.charset_encoding, str(current)),
                truncated=truncated,
            )
        finally:
            await response.aclose()
    raise FetchError(f"Too many redirects (more than {MAX_REDIRECTS}) starting at {url}.")


async def fetch_url(
    url: str,
    *,
    config: WebToolsConfig,
    client: httpx.AsyncClient | None = None,
    resolver: Resolver | None = None,
) -> FetchResult:
    """GET ``url`` safely and return its readable text.

    Raises :class:`BlockedURLError` for a refused scheme/address (also on a redirect hop) and
    :class:`FetchError` for network errors, timeouts and too many redirects. HTTP error
    statuses are returned, not raised. A given ``client`` should be built with
    ``trust_env=False`` (a proxy would resolve names itself and defeat the pinning);
    ``resolver`` replaces DNS (tests).
    """
    timeout = config.fetch_timeout_s
    try:
        async with asyncio.timeout(timeout):
            if client is not None:
                return await _fetch(url, config, client, resolver)
            async with httpx.AsyncClient(
                trust_env=False, follow_redirects=False, timeout=httpx.Timeout(timeout)
            ) as own:
                return await _fetch(url, config, own, resolver)
    except TimeoutError:
        raise FetchError(f"Fetching {url} timed out after {timeout:g}s.") from None
