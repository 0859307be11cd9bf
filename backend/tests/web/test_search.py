"""Search providers against a local server speaking their JSON APIs."""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from pronghorn.config.schema.app import WebToolsConfig
from pronghorn.web import (
    SearchError,
    SearchResult,
    SearxngSearch,
    TavilySearch,
    search_provider_from_config,
)

from .conftest import LocalServer, Request, Writer, respond

HITS = [
    {"title": "One", "url": "https://one.example/", "content": "first   hit", "score": 0.9},
    {"title": "Two", "url": "https://two.example/", "content": "second hit"},
    {"title": "No url"},
    {"title": "Three", "url": "https://three.example/", "content": "x" * 2000},
]


@pytest.fixture
def api(server: LocalServer) -> LocalServer:
    @server.route("/search")
    async def search(req: Request, w: Writer) -> None:
        if req.headers.get("authorization") == "Bearer bad":
            await respond(w, 401, '{"detail": "invalid key"}', {"Content-Type": "application/json"})
            return
        if req.method == "POST":  # Tavily
            body = req.json()
            assert isinstance(body, dict)
            payload = {"query": body["query"], "results": HITS, "response_time": 0.1}
        else:  # SearXNG
            payload = {"query": req.query["q"][0], "results": HITS, "number_of_results": 3}
        await respond(w, 200, json.dumps(payload), {"Content-Type": "application/json"})

    return server


def test_from_config() -> None:
    assert search_provider_from_config(WebToolsConfig()) is None
    assert search_provider_from_config(WebToolsConfig(search_provider="tavily")) is None
    assert search_provider_from_config(WebToolsConfig(search_provider="searxng")) is None
    tavily = search_provider_from_config(
        WebToolsConfig(search_provider="tavily", search_api_key=SecretStr("tvly-x"))
    )
    assert isinstance(tavily, TavilySearch)
    searx = search_provider_from_config(
        WebToolsConfig(search_provider="searxng", search_base_url="http://127.0.0.1:1")
    )
    assert isinstance(searx, SearxngSearch)


async def test_tavily(api: LocalServer) -> None:
    cfg = WebToolsConfig(
        search_provider="tavily",
        search_api_key=SecretStr("tvly-test"),
        search_base_url=api.base_url,
    )
    provider = search_provider_from_config(cfg)
    assert provider is not None and provider.name == "tavily"
    try:
        results = await provider.search("pronghorn speed", max_results=2)
    finally:
        await provider.aclose()
    assert results == [
        SearchResult("One", "https://one.example/", "first hit"),
        SearchResult("Two", "https://two.example/", "second hit"),
    ]
    req = api.requests[0]
    assert (req.method, req.path) == ("POST", "/search")
    assert req.headers["authorization"] == "Bearer tvly-test"
    assert req.json() == {"query": "pronghorn speed", "max_results": 2, "search_depth": "basic"}


async def test_searxng(api: LocalServer) -> None:
    cfg = WebToolsConfig(search_provider="searxng", search_base_url=api.base_url + "/")
    provider = search_provider_from_config(cfg)
    assert provider is not None and provider.name == "searxng"
    try:
        results = await provider.search("antelope", max_results=10)
    finally:
        await provider.aclose()
    assert [r.title for r in results] == ["One", "Two", "Three"]
    assert len(results[2].snippet) == 500
    req = api.requests[0]
    assert (req.method, req.path) == ("GET", "/search")
    assert req.query == {"q": ["antelope"], "format": ["json"]}
    assert "authorization" not in req.headers


async def test_errors_do_not_leak_key(api: LocalServer) -> None:
    provider = TavilySearch(api.base_url, "bad", 5, None)
    with pytest.raises(SearchError, match="HTTP 401") as err:
        await provider.search("x")
    assert "bad" not in str(err.value).replace("HTTP", "")
    with pytest.raises(SearchError, match="empty"):
        await provider.search("  ")
    await provider.aclose()
    down = SearxngSearch("http://127.0.0.1:1", None, 2, None)
    with pytest.raises(SearchError, match="ConnectError"):
        await down.search("x")
    await down.aclose()
