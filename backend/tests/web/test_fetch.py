"""fetch_url against a real local HTTP server: refusals, pinning, redirects, caps, timeout."""

from __future__ import annotations

import asyncio
import time

import pytest

from pronghorn.config.schema.app import WebToolsConfig
from pronghorn.web import BlockedURLError, FetchError, fetch_url
from pronghorn.web.fetch import MAX_REDIRECTS

from .conftest import LocalServer, Request, Writer, respond

OPEN = WebToolsConfig(allow_private_addresses=True, fetch_timeout_s=5)
STRICT = WebToolsConfig(fetch_timeout_s=5)

PAGE = """<!doctype html><html><head><title>Test page</title>
<script>var secret = "do-not-show";</script><style>body{color:red}</style></head>
<body><h1>Welcome</h1><p>First   paragraph with <a href="/next">a link</a>.</p>
<ul><li>alpha</li><li>beta</li></ul></body></html>"""


@pytest.fixture
def routes(server: LocalServer) -> LocalServer:
    @server.route("/page")
    async def page(req: Request, w: Writer) -> None:
        await respond(w, 200, PAGE, {"Content-Type": "text/html; charset=utf-8"})

    @server.route("/plain")
    async def plain(req: Request, w: Writer) -> None:
        await respond(
            w, 200, "héllo".encode("latin-1"), {"Content-Type": "text/plain; charset=latin-1"}
        )

    @server.route("/host")
    async def host(req: Request, w: Writer) -> None:
        await respond(w, 200, req.headers.get("host", ""), {"Content-Type": "text/plain"})

    @server.route("/redirect")
    async def redirect(req: Request, w: Writer) -> None:
        await respond(w, 302, "", {"Location": req.query["to"][0]})

    @server.route("/loop")
    async def loop(req: Request, w: Writer) -> None:
        await respond(w, 301, "", {"Location": "/loop"})

    @server.route("/big")
    async def big(req: Request, w: Writer) -> None:
        size = 4 * 1024 * 1024
        head = f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {size}\r\n\r\n"
        w.write(head.encode())
        try:
            for _ in range(size // 65536):
                w.write(b"a" * 65536)
                await w.drain()
        except ConnectionError:
            pass

    @server.route("/slow")
    async def slow(req: Request, w: Writer) -> None:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nab")
        await w.drain()
        await asyncio.sleep(10)

    @server.route("/image")
    async def image(req: Request, w: Writer) -> None:
        await respond(w, 200, b"\x89PNG\r\n\x1a\n\x00\x00", {"Content-Type": "image/png"})

    @server.route("/missing")
    async def missing(req: Request, w: Writer) -> None:
        await respond(w, 404, "no such page", {"Content-Type": "text/plain"})

    return server


async def test_html_becomes_text(routes: LocalServer) -> None:
    r = await fetch_url(f"{routes.base_url}/page", config=OPEN)
    assert r.status == 200 and not r.truncated
    assert r.content_type.startswith("text/html")
    assert r.final_url == r.url == f"{routes.base_url}/page"
    assert r.text.startswith("# Test page")
    assert "# Welcome" in r.text
    assert f"First paragraph with [a link]({routes.base_url}/next)." in r.text
    assert "- alpha\n- beta" in r.text
    assert "do-not-show" not in r.text and "color:red" not in r.text


async def test_charset_binary_and_errors(routes: LocalServer) -> None:
    assert (await fetch_url(f"{routes.base_url}/plain", config=OPEN)).text == "héllo"
    img = await fetch_url(f"{routes.base_url}/image", config=OPEN)
    assert img.text.startswith("[image/png content")
    missing = await fetch_url(f"{routes.base_url}/missing", config=OPEN)
    assert missing.status == 404 and missing.text == "no such page"


async def test_private_ip_refused(routes: LocalServer) -> None:
    with pytest.raises(BlockedURLError, match="loopback"):
        await fetch_url(f"{routes.base_url}/page", config=STRICT)
    for url in (
        f"http://2130706433:{routes.port}/page",
        f"http://[::ffff:127.0.0.1]:{routes.port}/page",
    ):
        with pytest.raises(BlockedURLError):
            await fetch_url(url, config=STRICT)
    with pytest.raises(FetchError):  # httpx itself rejects the octal form
        await fetch_url(f"http://0177.0.0.1:{routes.port}/page", config=STRICT)
    assert routes.requests == []


async def test_localhost_refused(routes: LocalServer) -> None:
    with pytest.raises(BlockedURLError, match="localhost"):
        await fetch_url(f"http://localhost:{routes.port}/page", config=STRICT)
    assert routes.requests == []


async def test_name_resolving_to_loopback_refused(routes: LocalServer) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return {"innocent.example": ["127.0.0.1"]}[host]

    with pytest.raises(BlockedURLError, match=r"innocent\.example"):
        await fetch_url(
            f"http://innocent.example:{routes.port}/page", config=STRICT, resolver=resolver
        )
    assert routes.requests == []


async def test_connects_to_vetted_ip_with_original_host(routes: LocalServer) -> None:
    """DNS is asked once per hop and the connection goes to that answer: a name that the
    system resolver does not know at all still works, so nothing re-resolved it."""
    calls: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["127.0.0.1"]

    r = await fetch_url(f"http://pinned.invalid:{routes.port}/host", config=OPEN, resolver=resolver)
    assert r.text == f"pinned.invalid:{routes.port}"
    assert calls == ["pinned.invalid"]


async def test_redirect_to_metadata_refused(routes: LocalServer) -> None:
    for target in (
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://2852039166/",
    ):
        url = f"{routes.base_url}/redirect?to={target}"
        with pytest.raises(BlockedURLError, match="metadata"):
            await fetch_url(url, config=OPEN)


async def test_redirect_rechecked_each_hop(routes: LocalServer) -> None:
    seen: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        seen.append(host)
        return {"first.example": ["127.0.0.1"], "evil.example": ["169.254.169.254"]}[host]

    url = f"http://first.example:{routes.port}/redirect?to=http://evil.example/"
    with pytest.raises(BlockedURLError):
        await fetch_url(url, config=OPEN, resolver=resolver)
    assert seen == ["first.example", "evil.example"]


async def test_redirects_followed_and_limited(routes: LocalServer) -> None:
    r = await fetch_url(f"{routes.base_url}/redirect?to=/page", config=OPEN)
    assert r.final_url == f"{routes.base_url}/page"
    assert r.url == f"{routes.base_url}/redirect?to=/page"
    routes.requests.clear()
    with pytest.raises(FetchError, match="Too many redirects"):
        await fetch_url(f"{routes.base_url}/loop", config=OPEN)
    assert len(routes.requests) == MAX_REDIRECTS + 1


async def test_size_cap(routes: LocalServer) -> None:
    cfg = WebToolsConfig(allow_private_addresses=True, fetch_max_bytes=100_000)
    started = time.monotonic()
    r = await fetch_url(f"{routes.base_url}/big", config=cfg)
    assert r.truncated
    assert len(r.text) == 100_000
    assert time.monotonic() - started < 5


async def test_timeout(routes: LocalServer) -> None:
    cfg = WebToolsConfig(allow_private_addresses=True, fetch_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"timed out|Timeout"):
        await fetch_url(f"{routes.base_url}/slow", config=cfg)
    assert time.monotonic() - started < 4


async def test_bad_urls() -> None:
    for url in ("not a url", "file:///etc/passwd", "ftp://example.com/", "http:///nohost"):
        with pytest.raises(FetchError):
            await fetch_url(url, config=OPEN)
