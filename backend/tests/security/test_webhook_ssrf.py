"""Run webhooks are client-chosen URLs: they must not make the gateway POST run output to
loopback, the gateway itself, internal networks or the cloud metadata address.

A real HTTP server on loopback stands in for an internal service; every test checks what it
actually received.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx
import pytest
from langgraph_sdk.errors import UnprocessableEntityError

from support.inproc import InProcessServer
from support.live import LiveServer, base_config
from support.sdk import SdkFactory, as_state

from .conftest import assert_responsive


class Hook:
    """A loopback HTTP server that records POSTs; answers ``statuses`` in order, then 200."""

    def __init__(self, statuses: list[int] | None = None, location: str | None = None) -> None:
        self.received: list[dict] = []
        self.statuses = list(statuses or [])
        self.location = location
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = hook.statuses.pop(0) if hook.statuses else 200
                if status == 200:
                    hook.received.append(json.loads(body))
                self.send_response(status)
                if hook.location and status in (301, 302, 307, 308):
                    self.send_header("Location", hook.location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Hook:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def hook() -> Iterator[Hook]:
    with Hook() as h:
        yield h


def human(text: str) -> dict:
    return {"messages": [{"role": "human", "content": text}]}


async def wait_for(predicate: Callable[[], bool], within_s: float = 20.0) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The default: webhooks may not reach private addresses."""
    server = LiveServer(tmp_path_factory.mktemp("webhook-strict"), base_config()).start()
    yield server
    server.stop()


LITERAL_TARGETS = [
    "http://127.0.0.1:{port}/hook",
    "http://127.1:{port}/hook",
    "http://2130706433:{port}/hook",
    "http://0x7f.0.0.1:{port}/hook",
    "http://[::1]:{port}/hook",
    "http://[::ffff:127.0.0.1]:{port}/hook",
    "http://[::ffff:7f00:1]:{port}/hook",
    "http://0.0.0.0:{port}/hook",
    "http://10.0.0.1/hook",
    "http://192.168.1.1/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://user:pw@example.com/hook",
    "ftp://example.com/hook",
]


@pytest.mark.parametrize("target", LITERAL_TARGETS)
async def test_internal_literal_targets_are_refused_at_accept(
    strict: LiveServer, hook: Hook, target: str, sdk_client: SdkFactory
):
    client = sdk_client(url=strict.api, timeout=30)
    thread = await client.threads.create()
    url = target.format(port=hook.port)
    with pytest.raises(UnprocessableEntityError) as err:
        await client.runs.create(thread["thread_id"], "echo", input=human("x"), webhook=url)
    assert "webhook" in str(err.value).lower()
    # nothing was accepted: the thread has no run
    assert await client.runs.list(thread["thread_id"]) == []


async def test_gateway_itself_is_refused(strict: LiveServer, sdk_client: SdkFactory):
    """The webhook cannot make the gateway call its own API (e.g. to delete threads)."""
    client = sdk_client(url=strict.api, timeout=30)
    victim = await client.threads.create()
    thread = await client.threads.create()
    own = f"http://127.0.0.1:{strict.port}/api/langgraph/threads/{victim['thread_id']}"
    with pytest.raises(UnprocessableEntityError):
        await client.runs.create(thread["thread_id"], "echo", input=human("x"), webhook=own)
    assert (await client.threads.get(victim["thread_id"]))["thread_id"] == victim["thread_id"]


async def test_a_name_for_loopback_is_refused_at_delivery(
    strict: LiveServer, hook: Hook, sdk_client: SdkFactory
):
    """``localhost`` needs DNS, so the run is accepted; delivery vets the resolved address
    and refuses it — the loopback server never sees the run's output."""
    client = sdk_client(url=strict.api, timeout=30)
    thread = await client.threads.create()
    with assert_responsive(strict.url):
        out = await client.runs.wait(
            thread["thread_id"],
            "echo",
            input=human("secret output"),
            webhook=f"http://localhost:{hook.port}/hook",
        )
        assert as_state(out)["last_echo"] == "secret output"
        await wait_for(lambda: "webhook refused" in strict.logs())
    assert hook.received == []
    assert f"localhost:{hook.port}/hook" not in strict.logs().split("webhook refused", 1)[1]


@pytest.fixture(scope="module")
def lenient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    """The opt-in: private addresses allowed (metadata still refused). In this process: the
    webhooks go out from the app to the loopback hooks, nothing here needs its port."""
    cfg = base_config(runs={"webhook_allow_private_addresses": True})
    server = InProcessServer(tmp_path_factory.mktemp("webhook-lenient"), cfg).start()
    yield server
    server.stop()


async def test_opt_in_delivers_to_loopback_with_retry(lenient: InProcessServer):
    with Hook(statuses=[503]) as h:
        client = lenient.sdk(timeout=30)
        thread = await client.threads.create()
        url = f"http://127.0.0.1:{h.port}/hook"
        out = await client.runs.wait(thread["thread_id"], "echo", input=human("wh"), webhook=url)
        await wait_for(lambda: bool(h.received))
        assert len(h.received) == 1
        payload = h.received[0]
        assert payload["status"] == "success"
        assert payload["thread_id"] == thread["thread_id"]
        assert payload["values"]["last_echo"] == as_state(out)["last_echo"] == "wh"
        assert payload["run_started_at"] and payload["run_ended_at"]
        assert payload["webhook_sent_at"]
        # the Run as the API shows it: never the engine's claim or identity columns
        internal = {"owner", "owner_id", "principal", "fence", "lease_expires_at", "leased"}
        assert not internal & payload.keys()


async def test_opt_in_still_refuses_metadata(lenient: InProcessServer):
    client = lenient.sdk(timeout=30)
    thread = await client.threads.create()
    for url in ("http://169.254.169.254/latest/", "http://[::ffff:169.254.169.254]/"):
        with pytest.raises(UnprocessableEntityError):
            await client.runs.create(thread["thread_id"], "echo", input=human("x"), webhook=url)


async def test_redirects_are_not_followed(lenient: InProcessServer):
    """A webhook answering 307 to another target does not get the body re-sent there."""
    with Hook() as inner, Hook(statuses=[307], location="") as outer:
        outer.location = f"http://127.0.0.1:{inner.port}/stolen"
        client = lenient.sdk(timeout=30)
        thread = await client.threads.create()
        await client.runs.wait(
            thread["thread_id"],
            "echo",
            input=human("r"),
            webhook=f"http://127.0.0.1:{outer.port}/hook",
        )
        await wait_for(lambda: not outer.statuses)  # the 307 was served
        # give a follow-up request every chance to arrive: another run's webhook to the
        # inner server is delivered after it, in order, on the same client
        await client.runs.wait(
            thread["thread_id"],
            "echo",
            input=human("marker"),
            webhook=f"http://127.0.0.1:{inner.port}/marker",
        )
        await wait_for(lambda: bool(inner.received))
        assert [p["values"]["last_echo"] for p in inner.received] == ["marker"]


async def test_cron_webhook_is_checked(strict: LiveServer):
    async with httpx.AsyncClient(base_url=strict.api, timeout=30) as http:
        thread = (await http.post("/threads", json={})).json()
        r = await http.post(
            f"/threads/{thread['thread_id']}/runs/crons",
            json={
                "assistant_id": "echo",
                "schedule": "0 0 1 1 *",
                "input": human("c"),
                "webhook": "http://127.0.0.1:9/hook",
            },
        )
        assert r.status_code == 422, r.text
        assert "webhook" in r.json()["detail"].lower()
