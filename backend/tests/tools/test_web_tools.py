"""web_fetch against a real local HTTP server (allowed only with allow_private_addresses),
and web_search through a SearXNG provider pointed at a local server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from pronghorn.web.search import SearxngSearch
from tools.conftest import MakeKit
from web.conftest import LocalServer, Request, Writer, respond


@pytest.fixture
async def site() -> AsyncIterator[LocalServer]:
    srv = LocalServer()

    @srv.route("/page")
    async def page(_: Request, writer: Writer) -> None:
        html = "<html><head><title>T</title></head><body><h1>Otters</h1><p>Swim.</p></body></html>"
        await respond(writer, 200, html, {"Content-Type": "text/html; charset=utf-8"})

    @srv.route("/long")
    async def long(_: Request, writer: Writer) -> None:
        await respond(writer, 200, "abcdefghij" * 2000, {"Content-Type": "text/plain"})

    @srv.route("/search")
    async def search(req: Request, writer: Writer) -> None:
        q = req.query["q"][0]
        results = [
            {"title": f"About {q} {i}", "url": f"https://example.com/{i}", "content": f"s{i}"}
            for i in range(10)
        ]
        body = json.dumps({"results": results})
        await respond(writer, 200, body, {"Content-Type": "application/json"})

    tcp = await asyncio.start_server(srv.handle, "127.0.0.1", 0)
    srv.port = tcp.sockets[0].getsockname()[1]
    async with tcp:
        yield srv
        tcp.close()


async def test_fetch_local_page_when_allowed(make_kit: MakeKit, site: LocalServer) -> None:
    kit = make_kit(web={"allow_private_addresses": True})
    text = await kit.text("web_fetch", url=f"{site.base_url}/page")
    head, body = text.split("\n\n", 1)
    assert f"URL: {site.base_url}/page" in head and "Status: 200" in head
    assert "Otters" in body and "Swim." in body and "<h1>" not in body


async def test_fetch_refuses_private_addresses_by_default(
    make_kit: MakeKit, site: LocalServer
) -> None:
    kit = make_kit()
    err = await kit.error("web_fetch", url=f"{site.base_url}/page")
    assert "127.0.0.1" in err or "private" in err.lower() or "loopback" in err.lower()
    assert site.requests == []  # never connected
    assert "Error" in await kit.error("web_fetch", url="file:///etc/passwd")


async def test_fetch_truncates_for_the_model(make_kit: MakeKit, site: LocalServer) -> None:
    kit = make_kit(web={"allow_private_addresses": True}, agent={"tool_output_soft_chars": 1000})
    text = await kit.text("web_fetch", url=f"{site.base_url}/long")
    assert "page text truncated (showing the first 2000 characters)" in text
    assert len(text) < 2300


async def test_fetch_unreachable(make_kit: MakeKit, site: LocalServer) -> None:
    kit = make_kit(web={"allow_private_addresses": True, "fetch_timeout_s": 2})
    err = await kit.error("web_fetch", url="http://127.0.0.1:9/")
    assert err.startswith("Error: ")


async def test_web_search(make_kit: MakeKit, site: LocalServer) -> None:
    provider = SearxngSearch(site.base_url, None, 5.0, None)
    try:
        kit = make_kit(search=provider)
        text = await kit.text("web_search", query="otters", max_results=2)
        assert text.splitlines() == [
            "1. About otters 0",
            "   https://example.com/0",
            "   s0",
            "2. About otters 1",
            "   https://example.com/1",
            "   s1",
        ]
        assert "empty" in await kit.error("web_search", query="  ")
    finally:
        await provider.aclose()
