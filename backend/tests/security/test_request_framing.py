"""A request with both Content-Length and Transfer-Encoding is refused with 400 and its
connection closed, over a raw socket against a real `pronghorn serve` (uvicorn's httptools
parser, llhttp, strict: it refuses the pair as h11 did, with its own wording): a proxy-safe
server never guesses which framing the sender meant (issue 28, point 6)."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit


def _exchange(url: str, raw: bytes) -> bytes:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(raw)
        chunks: list[bytes] = []
        while True:  # until the server closes the connection
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks)


def test_content_length_with_transfer_encoding_is_a_400(start_server):
    srv = start_server()
    body = b'{"metadata": {}}'
    smuggled = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    head = (
        b"POST /api/langgraph/threads HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n".encode()
        + b"Transfer-Encoding: chunked\r\n\r\n"
    )
    answer = _exchange(srv.url, head + chunked + smuggled)
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 400"), answer[:300]
    assert b"connection: close" in rest.lower()
    # Nothing after the refused request was served on that connection.
    assert answer.count(b"HTTP/1.1 ") == 1
    # One framing alone is fine.
    ok = _exchange(
        srv.url,
        b"POST /api/langgraph/threads HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nConnection: close\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body,
    )
    assert ok.startswith(b"HTTP/1.1 200"), ok[:300]
