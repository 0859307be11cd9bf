"""Pluggable web search behind the ``web_search`` tool.

Two providers: Tavily (``POST {base}/search``, bearer API key) and SearXNG
(``GET {base}/search?format=json``, self-hosted; key optional). The endpoints come from the
operator's config, so they are trusted and not subject to the SSRF rules of ``web_fetch``
(a SearXNG instance on a private network is normal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

import httpx

from pronghorn.config.schema.app import WebToolsConfig

TAVILY_DEFAULT_URL = "https://api.tavily.com"
MAX_RESULTS = 20
SNIPPET_CHARS = 500


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class SearchError(Exception):
    """The search failed; the message is safe to show to the model (no key inside)."""


@runtime_checkable
class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, max_results: int = 5) -> list[SearchResult]: ...

    async def aclose(self) -> None: ...


class _HTTPProvider:
    name = "search"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        timeout_s: float,
        client: httpx.AsyncClient | None,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._key = api_key
        self._own = client is None
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(timeout_s))

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    # Any: request options (json/params) are passed through to httpx unchanged.
    async def _call(self, method: str, path: str, **kwargs: Any) -> object:
        try:
            response = await self._client.request(
                method, f"{self._base}{path}", headers=self._headers(), **kwargs
            )
        except httpx.HTTPError as exc:
            raise SearchError(f"{self.name} search failed: {type(exc).__name__}") from None
        if response.status_code >= 400:
            raise SearchError(f"{self.name} search failed: HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError:
            raise SearchError(f"{self.name} search returned invalid JSON") from None

    @staticmethod
    def _results(data: object, limit: int) -> list[SearchResult]:
        """The ``results`` list of a provider's JSON answer, as search results."""
        body = cast("dict[str, object]", data) if isinstance(data, dict) else {}
        items = body.get("results")
        out: list[SearchResult] = []
        for raw in cast("list[object]", items) if isinstance(items, list) else []:
            if not isinstance(raw, dict):
                continue
            item = cast("dict[str, object]", raw)
            url = item.get("url")
            if not url:
                continue
            snippet = " ".join(str(item.get("content") or "").split())
            out.append(
                SearchResult(
                    title=str(item.get("title") or url),
                    url=str(url),
                    snippet=snippet[:SNIPPET_CHARS],
                )
            )
            if len(out) >= limit:
                break
        return out

    async def aclose(self) -> None:
        if self._own:
            await self._client.aclose()


def _check(query: str, max_results: int) -> int:
    if not query or not query.strip():
        raise SearchError("The search query is empty.")
    return max(1, min(MAX_RESULTS, max_results))


class TavilySearch(_HTTPProvider):
    name = "tavily"

    async def search(self, query: str, max_results: int = 5) -> list[SearchResult]:
        limit = _check(query, max_results)
        data = await self._call(
            "POST",
            "/search",
            json={"query": query, "max_results": limit, "search_depth": "basic"},
        )
        return self._results(data, limit)


class SearxngSearch(_HTTPProvider):
    name = "searxng"

    async def search(self, query: str, max_results: int = 5) -> list[SearchResult]:
        limit = _check(query, max_results)
        data = await self._call("GET", "/search", params={"q": query, "format": "json"})
        return self._results(data, limit)


def search_provider_from_config(
    cfg: WebToolsConfig, *, client: httpx.AsyncClient | None = None
) -> SearchProvider | None:
    """The configured provider, or None when search is not configured (tool not offered).

    Tavily needs ``search_api_key`` (``search_base_url`` defaults to the public API);
    SearXNG needs ``search_base_url`` (the key is optional, sent as a bearer token).
    """
    key = cfg.search_api_key.get_secret_value() if cfg.search_api_key else None
    if cfg.search_provider == "tavily" and key:
        base = cfg.search_base_url or TAVILY_DEFAULT_URL
        return TavilySearch(base, key, cfg.fetch_timeout_s, client)
    if cfg.search_provider == "searxng" and cfg.search_base_url:
        return SearxngSearch(cfg.search_base_url, key, cfg.fetch_timeout_s, client)
    return None
