"""docker/nginx.conf, run by a real nginx in front of a real local upstream.

Only the listen address and the upstream address are rewritten (compose's `gateway:2026`
becomes a 127.0.0.1 port); every proxy setting is the shipped one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
NGINX_CONF = REPO / "docker" / "nginx.conf"
EVENT_GAP_S = 1.5


def ensure_nginx() -> None:
    """Install Debian's nginx when missing and allowed (root with apt), as check-docker does."""
    if shutil.which("nginx"):
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("nginx is not installed")
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=300", "-qq"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [*apt, "install", "-y", "--no-install-recommends", "nginx"]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        subprocess.run([*apt, "update"], env=env, capture_output=True, check=False)
        subprocess.run(install, env=env, capture_output=True, check=False)
    if not shutil.which("nginx"):
        pytest.skip("nginx is not installed and could not be installed")


class Upstream(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, body: Any) -> None:
        raw = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        if self.path == "/stream":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(b'event: metadata\ndata: {"n": 1}\n\n' + b": pad\n" * 200)
            self.wfile.flush()
            time.sleep(EVENT_GAP_S)
            self.wfile.write(b"event: end\ndata: null\n\n")
            self.wfile.flush()
            return
        if self.path == "/big.json":
            self._json({"items": ["x" * 50] * 200})
            return
        self._json({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})

    def do_POST(self) -> None:
        size = int(self.headers["Content-Length"])
        remaining, total = size, 0
        while remaining:
            chunk = self.rfile.read(min(remaining, 1 << 20))
            total += len(chunk)
            remaining -= len(chunk)
        self._json({"received": total})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def render(conf: str, listen_port: int, upstream_port: int, tmp: Path) -> str:
    out = conf.replace("listen 80 default_server;", f"listen 127.0.0.1:{listen_port};")
    out = re.sub(r"^\s*listen \[::\]:80 default_server;\n", "", out, flags=re.M)
    out = out.replace("http://gateway:2026", f"http://127.0.0.1:{upstream_port}")
    temp_paths = "".join(
        f"    {kind}_temp_path {tmp / kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    assert out.count("http {\n") == 1
    return out.replace("http {\n", "http {\n" + temp_paths, 1)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    ensure_nginx()
    tmp = tmp_path_factory.mktemp("nginx")
    tmp.chmod(0o777)  # workers run as an unprivileged user when started by root
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, args=(0.05,), daemon=True).start()
    port = free_port()
    conf = tmp / "nginx.conf"
    conf.write_text(render(NGINX_CONF.read_text(), port, upstream.server_address[1], tmp))
    proc = subprocess.Popen(
        ["nginx", "-e", "stderr", "-p", str(tmp), "-c", str(conf),
         "-g", f"daemon off; pid {tmp / 'nginx.pid'};"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/nginx-health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                _, err = proc.communicate(timeout=5) if proc.poll() is not None else (None, b"")
                pytest.fail(f"nginx did not start: {err!r}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        upstream.shutdown()
        upstream.server_close()


def test_sse_is_streamed_unbuffered_and_uncompressed(proxy: str) -> None:
    started = time.monotonic()
    headers = {"Accept": "text/event-stream", "Accept-Encoding": "gzip"}
    with httpx.stream("GET", f"{proxy}/stream", headers=headers, timeout=10) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in response.headers
        assert response.headers.get("x-accel-buffering") == "no"
        lines = response.iter_lines()
        assert next(lines) == "event: metadata"
        first_at = time.monotonic() - started
        rest = list(lines)
        last_at = time.monotonic() - started
    assert "event: end" in rest
    # The first event arrives while the upstream still holds the second one back.
    assert first_at < EVENT_GAP_S * 0.66, (first_at, last_at)
    assert last_at >= EVENT_GAP_S * 0.9


def test_forwarded_headers_reach_the_gateway(proxy: str) -> None:
    response = httpx.get(f"{proxy}/api/langgraph/info?x=1", headers={"Host": "chat.example"})
    seen = response.json()
    assert seen["path"] == "/api/langgraph/info?x=1"
    h = seen["headers"]
    assert h["host"] == "chat.example"
    assert h["x-forwarded-for"] == "127.0.0.1" and h["x-real-ip"] == "127.0.0.1"
    assert h["x-forwarded-proto"] == "http" and h["x-forwarded-host"] == "chat.example"
    assert h.get("connection", "").lower() != "close"  # keep-alive to the upstream

    again = httpx.get(f"{proxy}/x", headers={"X-Forwarded-Proto": "https"}).json()
    assert again["headers"]["x-forwarded-proto"] == "https"  # from a TLS-terminating LB


def test_ordinary_json_is_compressed(proxy: str) -> None:
    response = httpx.get(f"{proxy}/big.json", headers={"Accept-Encoding": "gzip"})
    assert response.headers.get("content-encoding") == "gzip"
    assert len(response.json()["items"]) == 200


def test_uploads_above_nginx_default_limit_pass(proxy: str) -> None:
    body = b"\0" * (5 * 1024 * 1024)  # nginx's own default limit is 1 MiB
    response = httpx.post(f"{proxy}/api/threads/t/uploads", content=body, timeout=30)
    assert response.status_code == 200 and response.json() == {"received": len(body)}
