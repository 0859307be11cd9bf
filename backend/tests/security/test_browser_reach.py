"""Issue 16 part 7, browser reach: what a web page the user merely visits can make a local
gateway do, and input that is accepted now only to fail later.

The attacks run against one live ``pronghorn serve`` over real sockets: a foreign ``Host:``
(DNS rebinding), cross-site uploads and run creation, oversized bodies and headers, unknown
``stream_mode`` values on every entry point, 6/7-field cron schedules. What needs a config of
its own (no ``allowed_hosts``, ``"*"``, a reload that names a graph file that does not exist)
runs on the app in this process.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from pronghorn.cli import open_bind_warning
from pronghorn.config.errors import ConfigError
from pronghorn.config.loader import load_config
from security.conftest import assert_responsive
from support.inproc import InProcessServer
from support.live import LiveServer, base_config

BODY_CAP = 64 * 1024
START_S = 120.0  # generous: startup takes seconds, more on a loaded machine
EVIL = "https://evil.example"
APP_ORIGIN = "https://app.example.com"  # in server.cors_origins
HUMAN = {"messages": [{"role": "user", "content": "hi"}]}


@contextlib.contextmanager
def responsive(base_url: str) -> Iterator[None]:
    """``assert_responsive`` around an attack that may finish before the first probe: the
    block is held open until /health has been probed at least once."""
    with assert_responsive(base_url) as latencies:
        yield
        latencies.wait_for(1)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    config = base_config(
        server={
            "allowed_hosts": ["chat.example.com", "*.corp.example"],
            "cors_origins": [APP_ORIGIN],
            "max_body_bytes": BODY_CAP,
            "max_header_bytes": 16 * 1024,
            "max_header_count": 50,
        }
    )
    server = LiveServer(tmp_path_factory.mktemp("reach"), config).start(timeout=START_S)
    yield server
    server.stop()


@pytest.fixture
def http(srv: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=srv.url, timeout=30) as client:
        yield client


def new_thread(http: httpx.Client) -> str:
    resp = http.post("/api/langgraph/threads", json={})
    assert resp.status_code == 200, resp.text
    return resp.json()["thread_id"]


def uploads_on_disk(srv: LiveServer, thread_id: str) -> list[Path]:
    return [p for p in (srv.workdir / "data").rglob("*") if thread_id in p.parts and p.is_file()]


def _complete(answer: bytes) -> bool:
    """Whether ``answer`` holds a whole response: its head and the body its
    Content-Length announces."""
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return False


def raw_exchange(srv: LiveServer, request: bytes, timeout: float = 30) -> bytes:
    """Send raw bytes on a fresh connection; everything the server answers until it closes,
    its response is complete (Content-Length), or it stops sending for a moment after the
    response head."""
    with socket.create_connection(("127.0.0.1", srv.port), timeout=timeout) as sock:
        # the server may answer and close before reading everything
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(request)
        answer = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not _complete(answer):
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            except TimeoutError:
                break
            if not data:
                break
            answer += data
            if b"\r\n\r\n" in answer:
                sock.settimeout(1.0)  # the head is in; take what follows, then stop
        return answer


def status_of(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    return int(answer.split(b" ", 2)[1])


# --- Host allow-list (DNS rebinding) ----------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:2026", "corp.example", "x"])
def test_foreign_host_gets_400(srv: LiveServer, http: httpx.Client, host: str) -> None:
    with responsive(srv.url):
        for method, path in (("GET", "/api/langgraph/info"), ("POST", "/api/langgraph/threads")):
            resp = http.request(method, path, headers={"Host": host}, json={})
            assert resp.status_code == 400, (method, resp.text)
            assert "server.allowed_hosts" in resp.json()["detail"]


def test_rebinding_cannot_create_a_thread(srv: LiveServer, http: httpx.Client) -> None:
    marker = {"rebind": time.time()}
    resp = http.post(
        "/api/langgraph/threads", headers={"Host": "evil.example"}, json={"metadata": marker}
    )
    assert resp.status_code == 400
    found = http.post("/api/langgraph/threads/search", json={"metadata": marker})
    assert found.status_code == 200 and found.json() == []


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "LOCALHOST",
        "[::1]:{port}",
        "chat.example.com",
        "Chat.Example.Com:443",
        "a.corp.example",
        "b.a.corp.example:8443",
    ],
)
def test_loopback_and_listed_hosts_are_served(
    srv: LiveServer, http: httpx.Client, host: str
) -> None:
    resp = http.get("/api/langgraph/info", headers={"Host": host.format(port=srv.port)})
    assert resp.status_code == 200, resp.text


def test_probes_answer_for_any_host(http: httpx.Client) -> None:
    for path in ("/health", "/ready"):
        assert http.get(path, headers={"Host": "10.1.2.3:2026"}).status_code == 200


# The next three need a config of their own, not a port: the app runs in this process (the
# Host and Origin checks read the request's headers, the reload watches the config file).


def test_default_serves_loopback_names_only(start_app: Callable[..., InProcessServer]) -> None:
    server = start_app()  # no allowed_hosts
    with server.http(timeout=30) as client:
        for host in ("localhost", "127.0.0.1:2026", "[::1]:2026"):
            assert client.get("/api/langgraph/info", headers={"Host": host}).status_code == 200
        for host in ("evil.example", "192.168.1.10:2026", "chat.example.com"):
            assert client.get("/api/langgraph/info", headers={"Host": host}).status_code == 400


def test_star_turns_the_host_check_off(start_app: Callable[..., InProcessServer]) -> None:
    server = start_app(server={"allowed_hosts": ["*"]})
    with server.http(timeout=30) as client:
        resp = client.get("/api/langgraph/info", headers={"Host": "anything.example"})
        assert resp.status_code == 200
        # ...but a cross-site page is still refused: "*" is no trusted origin
        resp = client.post("/api/langgraph/threads", headers={"Origin": EVIL}, json={})
        assert resp.status_code == 403


@pytest.mark.parametrize(
    ("bind", "hosts", "warns"),
    [
        ("0.0.0.0", [], True),
        ("::", [], True),
        ("gateway.internal", [], True),
        ("0.0.0.0", ["chat.example.com"], False),
        ("127.0.0.1", [], False),
        ("127.0.0.2", [], False),
        ("::1", [], False),
        ("localhost", [], False),
    ],
)
def test_serve_warns_when_listening_wide_with_no_allowed_hosts(
    bind: str, hosts: list[str], warns: bool
) -> None:
    warning = open_bind_warning(bind, hosts)
    assert (warning is not None) is warns
    if warning:
        assert "server.allowed_hosts" in warning and "400" in warning


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("https://chat.example.com/", "without scheme"),
        ("chat.example.com:8443", "without a port"),
        ("chat example", "not a host name"),
    ],
)
def test_a_bad_allowed_hosts_entry_is_a_config_error(tmp_path: Path, entry: str, why: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"server": {"allowed_hosts": [entry]}}), encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_config(config, {})
    assert "server.allowed_hosts" in str(exc.value) and why in str(exc.value)


# --- Origin check on state-changing requests --------------------------------------------------


CROSS_SITE = [
    pytest.param({"Origin": EVIL}, id="origin"),
    pytest.param({"Origin": "null"}, id="origin-null"),
    pytest.param({"Sec-Fetch-Site": "cross-site"}, id="sec-fetch-site"),
    pytest.param({"Referer": f"{EVIL}/page.html"}, id="referer"),
    pytest.param({"Origin": "http://127.0.0.1:1"}, id="other-local-port"),
    pytest.param({"Origin": "http://localhost:5173"}, id="other-loopback-name"),
]


@pytest.mark.parametrize("headers", CROSS_SITE)
def test_cross_site_upload_is_refused_and_writes_nothing(
    srv: LiveServer, http: httpx.Client, headers: dict[str, str]
) -> None:
    tid = new_thread(http)
    files = {"files": ("pwn.txt", b"written by a cross-site form", "text/plain")}
    with responsive(srv.url):
        resp = http.post(f"/api/threads/{tid}/uploads", files=files, headers=headers)
    assert resp.status_code == 403, resp.text
    assert "Cross-site request refused" in resp.json()["detail"]
    listed = http.get(f"/api/threads/{tid}/uploads")
    assert listed.status_code == 200 and "pwn.txt" not in listed.text
    assert not [p for p in uploads_on_disk(srv, tid) if p.name == "pwn.txt"]


@pytest.mark.parametrize("headers", CROSS_SITE[:4])
def test_cross_site_run_creation_is_refused(
    srv: LiveServer, http: httpx.Client, headers: dict[str, str]
) -> None:
    tid = new_thread(http)
    body = {"assistant_id": "echo", "input": HUMAN}
    with responsive(srv.url):
        for path in (f"/api/langgraph/threads/{tid}/runs/wait", "/api/langgraph/runs/wait"):
            resp = http.post(path, json=body, headers=headers)
            assert resp.status_code == 403, resp.text
    assert http.get(f"/api/langgraph/threads/{tid}/runs").json() == []


def test_cross_site_delete_and_patch_are_refused(srv: LiveServer, http: httpx.Client) -> None:
    tid = new_thread(http)
    path = f"/api/langgraph/threads/{tid}"
    patched = http.patch(path, json={"metadata": {"owned": True}}, headers={"Origin": EVIL})
    assert patched.status_code == 403
    assert http.delete(path, headers={"Origin": EVIL}).status_code == 403
    thread = http.get(path)
    assert thread.status_code == 200 and "owned" not in thread.json()["metadata"]


def test_same_origin_and_sdk_requests_pass(srv: LiveServer, http: httpx.Client) -> None:
    tid = new_thread(http)  # SDK style: no Origin, Referer or Sec-Fetch-* at all
    same_origin = {
        "Origin": f"http://127.0.0.1:{srv.port}",
        "Referer": f"http://127.0.0.1:{srv.port}/chat/{tid}",
        "Sec-Fetch-Site": "same-origin",
    }
    files = {"files": ("notes.txt", b"from the web UI", "text/plain")}
    resp = http.post(f"/api/threads/{tid}/uploads", files=files, headers=same_origin)
    assert resp.status_code == 200, resp.text
    assert "notes.txt" in http.get(f"/api/threads/{tid}/uploads").text
    run = http.post(
        f"/api/langgraph/threads/{tid}/runs/wait",
        json={"assistant_id": "echo", "input": HUMAN},
        headers=same_origin,
    )
    assert run.status_code == 200 and run.json()["last_echo"] == "hi"
    # the SDK-style run (no browser headers) passes too
    run = http.post("/api/langgraph/runs/wait", json={"assistant_id": "echo", "input": HUMAN})
    assert run.status_code == 200, run.text


@pytest.mark.parametrize(
    "headers",
    [
        # the Vite dev server (make dev-ui) proxies /api with the browser's Host and Origin
        pytest.param(
            {"Host": "127.0.0.1:5173", "Origin": "http://127.0.0.1:5173"}, id="vite-dev-proxy"
        ),
        # nginx terminating TLS passes Host: chat.example.com, the page is https
        pytest.param(
            {"Host": "chat.example.com", "Origin": "https://chat.example.com"}, id="behind-tls"
        ),
        pytest.param({"Origin": APP_ORIGIN, "Sec-Fetch-Site": "cross-site"}, id="cors-origin"),
        pytest.param({"Origin": "https://chat.example.com"}, id="listed-host-origin"),
        pytest.param({"Origin": "https://x.corp.example"}, id="listed-wildcard-origin"),
        pytest.param({"Referer": f"{APP_ORIGIN}/app"}, id="cors-referer"),
        pytest.param({"Sec-Fetch-Site": "none"}, id="typed-in-url"),
    ],
)
def test_trusted_browser_origins_pass(http: httpx.Client, headers: dict[str, str]) -> None:
    resp = http.post("/api/langgraph/threads", json={}, headers=headers)
    assert resp.status_code == 200, resp.text


def test_safe_methods_are_not_origin_checked(http: httpx.Client) -> None:
    resp = http.get("/api/langgraph/info", headers={"Origin": EVIL, "Sec-Fetch-Site": "cross-site"})
    assert resp.status_code == 200


# --- Body and header caps ---------------------------------------------------------------------


def test_body_over_the_cap_gets_413_by_content_length(srv: LiveServer) -> None:
    # Content-Length says 1 GB and no byte follows: the answer comes without reading it.
    head = (
        "POST /api/langgraph/threads HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{srv.port}\r\n"
        "Content-Type: application/json\r\n"
        "Content-Length: 1000000000\r\n\r\n"
    ).encode()
    with responsive(srv.url):
        answer = raw_exchange(srv, head)
    assert status_of(answer) == 413
    assert b'"detail"' in answer and str(BODY_CAP).encode() in answer


def test_streamed_body_over_the_cap_gets_413(srv: LiveServer) -> None:
    # chunked: no Content-Length, the bytes are counted as they arrive
    chunk = b"x" * 8192
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(12)) + b"0\r\n\r\n"
    head = (
        "PUT /api/langgraph/store/items HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{srv.port}\r\n"
        "Content-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    with responsive(srv.url):
        answer = raw_exchange(srv, head + body)
    assert status_of(answer) == 413, answer[:300]
    assert b"Request body is larger than the limit" in answer


def test_body_under_the_cap_passes_and_json_over_it_is_refused(http: httpx.Client) -> None:
    small = {"namespace": ["reach"], "key": "small", "value": {"v": "x" * 1000}}
    assert http.put("/api/langgraph/store/items", json=small).status_code == 204
    big = {"namespace": ["reach"], "key": "big", "value": {"v": "x" * (BODY_CAP + 1)}}
    resp = http.put("/api/langgraph/store/items", json=big)
    assert resp.status_code == 413
    assert resp.json()["detail"].startswith("Request body is larger than the limit")
    got = http.get("/api/langgraph/store/items", params={"namespace": "reach", "key": "big"})
    assert got.status_code == 200 and got.json() is None  # never stored
    assert http.get("/health").status_code == 200


def test_uploads_keep_their_own_limit(http: httpx.Client) -> None:
    tid = new_thread(http)
    data = b"u" * (BODY_CAP * 3)  # over max_body_bytes, well under uploads.max_file_bytes
    resp = http.post(f"/api/threads/{tid}/uploads", files={"files": ("big.bin", data)})
    assert resp.status_code == 200, resp.text
    assert resp.json()["files"][0]["size"] == len(data)


def test_oversized_headers_are_refused(srv: LiveServer, http: httpx.Client) -> None:
    def head(header_bytes: int) -> bytes:
        return (
            "GET /api/langgraph/info HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{srv.port}\r\n"
            f"X-Big: {'a' * header_bytes}\r\n\r\n"
        ).encode()

    with responsive(srv.url):
        # over max_header_bytes (16 KiB here) but parsed whole: 431 from the gateway
        answer = raw_exchange(srv, head(20 * 1024))
        assert status_of(answer) == 431, answer[:300]
        assert b"Request headers are too large" in answer
        # far over it: refused before the head ends (431, then close; the reset of the
        # unread rest can overtake the answer)
        answer = raw_exchange(srv, head(4 * 1024 * 1024))
        assert answer == b"" or status_of(answer) == 431, answer[:300]
    assert http.get("/health").status_code == 200


def test_too_many_headers_get_431(srv: LiveServer, http: httpx.Client) -> None:
    headers = {f"X-H{i}": "v" for i in range(80)}
    with responsive(srv.url):
        resp = http.get("/api/langgraph/info", headers=headers)
    assert resp.status_code == 431
    assert "Too many request headers" in resp.json()["detail"]


# --- stream_mode on every entry point ---------------------------------------------------------


def _finished_run(http: httpx.Client) -> tuple[str, str]:
    tid = new_thread(http)
    resp = http.post(
        f"/api/langgraph/threads/{tid}/runs", json={"assistant_id": "echo", "input": HUMAN}
    )
    assert resp.status_code == 200, resp.text
    rid = resp.json()["run_id"]
    assert http.get(f"/api/langgraph/threads/{tid}/runs/{rid}/join").status_code == 200
    return tid, rid


def _assert_unknown_mode(resp: httpx.Response, mode: str = "bogus") -> None:
    assert resp.status_code == 422, resp.text
    detail = resp.json()["detail"]
    assert f"unknown stream_mode {mode!r}" in detail and "expected one of" in detail


def test_unknown_stream_mode_in_run_bodies(http: httpx.Client) -> None:
    tid = new_thread(http)
    for path in (
        f"/api/langgraph/threads/{tid}/runs",
        f"/api/langgraph/threads/{tid}/runs/stream",
        f"/api/langgraph/threads/{tid}/runs/wait",
        "/api/langgraph/runs/stream",
        "/api/langgraph/runs/wait",
    ):
        for modes in ("bogus", ["values", "bogus"]):
            body = {"assistant_id": "echo", "input": HUMAN, "stream_mode": modes}
            _assert_unknown_mode(http.post(path, json=body))
    assert http.get(f"/api/langgraph/threads/{tid}/runs").json() == []


@pytest.mark.parametrize(
    "params",
    [
        {"stream_mode": "bogus"},
        {"stream_mode": ["values", "bogus"]},
        {"stream_mode": "values,bogus"},
        {"stream_mode": '["updates", "bogus"]'},
    ],
)
def test_unknown_stream_mode_on_join(http: httpx.Client, params: dict[str, Any]) -> None:
    tid, rid = _finished_run(http)
    _assert_unknown_mode(http.get(f"/api/langgraph/threads/{tid}/runs/{rid}/stream", params=params))
    _assert_unknown_mode(
        http.post(f"/api/langgraph/threads/{tid}/runs/{rid}/stream", params=params)
    )
    _assert_unknown_mode(http.get(f"/api/langgraph/runs/{rid}/stream", params=params))


def test_known_stream_modes_on_join_still_stream(http: httpx.Client) -> None:
    tid, rid = _finished_run(http)
    resp = http.get(
        f"/api/langgraph/threads/{tid}/runs/{rid}/stream",
        params={"stream_mode": ["values", "messages-tuple"]},
        headers={"Last-Event-ID": "-1"},
    )
    assert resp.status_code == 200 and "event: values" in resp.text


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"stream_mode": "bogus"}, "bogus"),
        ({"stream_modes": "lifecycle,bogus"}, "bogus"),
        ({"stream_mode": "values"}, "values"),  # a run mode, not a thread stream mode
    ],
)
def test_unknown_stream_mode_on_thread_stream(
    http: httpx.Client, params: dict[str, str], bad: str
) -> None:
    tid = new_thread(http)
    _assert_unknown_mode(http.get(f"/api/langgraph/threads/{tid}/stream", params=params), bad)


def test_known_thread_stream_modes_pass(http: httpx.Client) -> None:
    tid = new_thread(http)
    for params in ({"stream_mode": "lifecycle"}, {"stream_modes": "run_modes,state_update"}):
        with http.stream("GET", f"/api/langgraph/threads/{tid}/stream", params=params) as resp:
            assert resp.status_code == 200  # an endless stream: the head is enough


def test_unknown_stream_mode_in_cron_payloads(http: httpx.Client) -> None:
    body = {"assistant_id": "echo", "schedule": "0 3 * * *", "stream_mode": ["bogus"]}
    _assert_unknown_mode(http.post("/api/langgraph/runs/crons", json=body))
    tid = new_thread(http)
    _assert_unknown_mode(http.post(f"/api/langgraph/threads/{tid}/runs/crons", json=body))
    cron = http.post("/api/langgraph/runs/crons", json={**body, "stream_mode": "updates"})
    assert cron.status_code == 200, cron.text
    cid = cron.json()["cron_id"]
    _assert_unknown_mode(
        http.patch(f"/api/langgraph/runs/crons/{cid}", json={"stream_mode": "x"}), "x"
    )
    stored = http.get(f"/api/langgraph/runs/crons/{cid}").json()
    assert stored["payload"]["stream_mode"] == "updates"
    http.delete(f"/api/langgraph/runs/crons/{cid}")


# --- cron schedules ---------------------------------------------------------------------------


@pytest.mark.parametrize("schedule", ["* * * * * *", "0 0 3 * * * 2030", "* * * *", "@every"])
def test_cron_schedule_outside_the_5_field_form_is_422(http: httpx.Client, schedule: str) -> None:
    resp = http.post(
        "/api/langgraph/runs/crons", json={"assistant_id": "echo", "schedule": schedule}
    )
    assert resp.status_code == 422, resp.text
    assert "invalid cron schedule" in resp.json()["detail"]
    if len(schedule.split()) > 1:
        assert "expected 5 fields" in resp.json()["detail"]


def test_cron_update_to_6_fields_is_422_and_keeps_the_schedule(http: httpx.Client) -> None:
    cron = http.post(
        "/api/langgraph/runs/crons", json={"assistant_id": "echo", "schedule": "@hourly"}
    )
    assert cron.status_code == 200, cron.text
    cid = cron.json()["cron_id"]
    resp = http.patch(f"/api/langgraph/runs/crons/{cid}", json={"schedule": "*/5 * * * * *"})
    assert resp.status_code == 422 and "expected 5 fields" in resp.json()["detail"]
    assert http.get(f"/api/langgraph/runs/crons/{cid}").json()["schedule"] == "@hourly"
    ok = http.patch(f"/api/langgraph/runs/crons/{cid}", json={"schedule": "*/5 * * * *"})
    assert ok.status_code == 200 and ok.json()["schedule"] == "*/5 * * * *"
    http.delete(f"/api/langgraph/runs/crons/{cid}")


# --- a missing graph file on reload -----------------------------------------------------------


LOCAL_GRAPH = "from testgraphs.echo import graph  # noqa: F401\n"


def _status(client: httpx.Client) -> dict[str, Any]:
    resp = client.get("/api/config/status")
    assert resp.status_code == 200
    return resp.json()


def _wait_for(predicate: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_missing_graph_file_on_reload_is_a_config_error(
    start_app: Callable[..., InProcessServer], tmp_path: Path
) -> None:
    workdir = tmp_path / "app0"  # where start_app puts the first app (and its config)
    workdir.mkdir()
    (workdir / "local_graph.py").write_text(LOCAL_GRAPH, encoding="utf-8")
    config = base_config()
    config["graphs"] = {**config["graphs"], "local": "./local_graph.py:graph"}
    server = start_app(graphs=config["graphs"])
    assert server.workdir == workdir
    with server.http(timeout=30) as client:
        assert _status(client)["last_error"] is None
        before = _status(client)["version_hash"]
        broken = {**config, "graphs": {**config["graphs"], "ghost": "./missing.py:graph"}}
        server.write_config(broken)
        _wait_for(lambda: _status(client)["last_error"] is not None, "the reload error")
        status = _status(client)
        assert "graphs.ghost" in status["last_error"] and "missing.py" in status["last_error"]
        assert "does not exist" in status["last_error"]
        assert status["version_hash"] == before  # the old config stays
        assert "ghost" not in client.get("/api/langgraph/info").json()["graphs"]
        run = client.post(
            "/api/langgraph/runs/wait", json={"assistant_id": "local", "input": HUMAN}
        )
        assert run.status_code == 200 and run.json()["last_echo"] == "hi"
        server.write_config(config)  # fixed: valid again
        _wait_for(lambda: _status(client)["last_error"] is None, "the error to clear")


def test_missing_graph_file_at_startup_is_refused_clearly(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"graphs": {"ghost": "./missing.py:graph"}}), "utf-8")
    with pytest.raises(ConfigError) as exc:
        load_config(config, {})  # what `pronghorn serve` and `config check` run first
    assert "graphs.ghost" in str(exc.value) and str(tmp_path / "missing.py") in str(exc.value)
