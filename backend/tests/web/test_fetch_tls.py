"""HTTPS through the pinned address: the certificate is still checked against the URL's host
name (SNI), so pinning does not weaken TLS."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from pronghorn.config.schema.app import WebToolsConfig
from pronghorn.web import FetchError, fetch_url

from .conftest import LocalServer, Request, Writer, respond

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")
CFG = WebToolsConfig(allow_private_addresses=True, fetch_timeout_s=5)


def _make_cert(folder: Path, name: str) -> tuple[Path, Path]:
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
async def tls_server(tmp_path: Path) -> AsyncIterator[tuple[LocalServer, Path]]:
    cert, key = await asyncio.to_thread(_make_cert, tmp_path, "secure.test")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    srv = LocalServer()

    @srv.route("/")
    async def index(req: Request, w: Writer) -> None:
        await respond(w, 200, f"tls ok for {req.headers['host']}", {"Content-Type": "text/plain"})

    tcp = await asyncio.start_server(srv.handle, "127.0.0.1", 0, ssl=ctx)
    srv.port = tcp.sockets[0].getsockname()[1]
    async with tcp:
        yield srv, cert
        tcp.close()


async def _resolver(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


async def test_https_sni_and_certificate_checked(tls_server: tuple[LocalServer, Path]) -> None:
    srv, cert = tls_server
    verify = ssl.create_default_context(cafile=str(cert))
    async with httpx.AsyncClient(verify=verify, trust_env=False) as client:
        r = await fetch_url(
            f"https://secure.test:{srv.port}/", config=CFG, client=client, resolver=_resolver
        )
        assert r.text == f"tls ok for secure.test:{srv.port}"
        # Same IP, but a name the certificate does not cover: the handshake must fail.
        with pytest.raises(FetchError, match="ConnectError"):
            await fetch_url(
                f"https://other.test:{srv.port}/", config=CFG, client=client, resolver=_resolver
            )
