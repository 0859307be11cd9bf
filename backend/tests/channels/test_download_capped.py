"""Platform file downloads: returned whole within the cap, refused by name past it, and
refused with the status (never the URL, which may hold a token) when the platform says no."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from pronghorn.channels.errors import PlatformError
from pronghorn.channels.http_api import download_capped

CHUNK = b"x" * 1024


async def big(_request: object) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(1000):  # 1000 KiB
            yield CHUNK

    return StreamingResponse(body())


async def small(_request: object) -> Response:
    return Response(b"hello")


async def gone(_request: object) -> Response:
    return Response(b"nope", status_code=404)


APP = Starlette(routes=[Route("/big", big), Route("/small", small), Route("/gone", gone)])


def client() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=APP), base_url="http://files")


async def test_a_file_within_the_cap_is_returned_whole() -> None:
    async with client() as c:
        assert await download_capped(c, "/small", "a.txt", 5) == b"hello"


async def test_a_file_past_the_cap_is_refused_by_name() -> None:
    async with client() as c:
        with pytest.raises(PlatformError, match=r"big\.bin is larger than 10240 bytes"):
            await download_capped(c, "/big", "big.bin", 10 * 1024)


async def test_a_refused_download_names_the_status_not_the_url() -> None:
    async with client() as c:
        with pytest.raises(PlatformError) as err:
            await download_capped(c, "/gone?token=secret", "a.txt", 100)
    assert str(err.value) == "file download: HTTP 404"
