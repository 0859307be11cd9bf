"""Live graph reload in a cluster: each replica applies its own config file's `graphs:`
and reports what it applied in its own `/api/config/status` (issue 26 part 4)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import httpx

from support.inproc import InProcessServer

API = "/api/langgraph"


def _graphs(client: httpx.Client) -> dict[str, Any]:
    status = client.get("/api/config/status").json()
    assert status["last_error"] is None, status
    return status["graphs"]


def _until(check: Callable[[], bool], what: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _add_extra(app: InProcessServer) -> None:
    config = copy.deepcopy(app.config)
    config["graphs"]["extra"] = "testgraphs.react_context:greeter"
    app.write_config(config)


def test_each_replica_reloads_its_own_graphs(replica: Callable[..., InProcessServer]) -> None:
    a, b = replica(), replica()
    with a.http() as ca, b.http() as cb:
        _add_extra(a)
        _until(lambda: "extra" in _graphs(ca)["loaded"], "replica A's reload")
        assert _graphs(ca)["last_reload"]["added"] == ["extra"]
        # B reads its own file, which has not changed: it neither serves nor reports it.
        assert "extra" not in _graphs(cb)["loaded"] and _graphs(cb)["last_reload"] is None
        assert "extra" not in cb.get(f"{API}/info").json()["graphs"]
        _add_extra(b)
        _until(lambda: "extra" in _graphs(cb)["loaded"], "replica B's reload")
        for client in (ca, cb):
            tid = client.post(f"{API}/threads", json={}).json()["thread_id"]
            out = client.post(
                f"{API}/threads/{tid}/runs/wait",
                json={"assistant_id": "extra", "input": {"messages": []}},
            )
            assert out.status_code == 200, out.text
            assert out.json()["messages"][-1]["content"] == "hello, world"
