"""Web tools: SSRF-safe fetching and pluggable search."""

from pronghorn.web.fetch import FetchResult, fetch_url
from pronghorn.web.search import (
    SearchError,
    SearchProvider,
    SearchResult,
    SearxngSearch,
    TavilySearch,
    search_provider_from_config,
)
from pronghorn.web.ssrf import BlockedURLError, FetchError, blocked_reason, vet_url

__all__ = [
    "BlockedURLError",
    "FetchError",
    "FetchResult",
    "SearchError",
    "SearchProvider",
    "SearchResult",
    "SearxngSearch",
    "TavilySearch",
    "blocked_reason",
    "fetch_url",
    "search_provider_from_config",
    "vet_url",
]
