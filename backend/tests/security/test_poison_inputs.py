"""Issue 16 part 6: input that poisons the database, attacked for real on a live gateway.

Each input used to answer 500, several of them *after* committing the row, and then the
default `threads/search` answered 500 for everyone. Now each one answers 422 with a clear
message, writes nothing, its body matches the 422 schema the served `/openapi.json`
documents, and every search still answers 200 afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import jsonschema
import pytest

from security.conftest import assert_responsive
from support.inproc import InProcessServer
from support.live import base_config

DEEP = "[" * 400 + "]" * 400
BIG_INT = "99999999999999999999"  # beyond int64 (and uint64)


@dataclass
class World:
    """A gateway with one thread that has run once (so it has checkpoints and events)."""

    server: InProcessServer
    thread_id: str
    run_id: str
    openapi: dict[str, Any] = field(default_factory=dict)

    @property
    def api(self) -> str:
        return self.server.api


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    server = InProcessServer(tmp_path_factory.mktemp("poison"), base_config()).start(timeout=90)
    try:
        with server.http(base_url=server.api, timeout=60) as http:
            tid = http.post("/threads", json={"metadata": {"kind": "victim"}}).json()["thread_id"]
            done = http.post(
                f"/threads/{tid}/runs/wait",
                json={
                    "assistant_id": "echo",
                    "input": {"messages": [{"role": "user", "content": "hi"}]},
                },
            )
            assert done.status_code == 200, done.text
            run_id = http.get(f"/threads/{tid}/runs").json()[0]["run_id"]
            http.put("/store/items", json={"namespace": ["docs"], "key": "k", "value": {"n": 1}})
        with server.http() as http:
            openapi = http.get("/openapi.json").json()
        yield World(server, tid, run_id, openapi)
    finally:
        server.stop()


@dataclass(frozen=True)
class Poison:
    name: str
    method: str
    path: str  # formatted with {tid} and {rid}
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    detail: str = ""  # a substring the 422's detail must contain
    status: int = 422


POISONS = [
    Poison(
        "lone surrogate in thread metadata",
        "POST",
        "/threads",
        b'{"metadata": {"x": "\\ud800"}}',
        detail="surrogate",
    ),
    Poison(
        "lone low surrogate in a metadata key",
        "POST",
        "/threads",
        b'{"metadata": {"\\udc00": 1}}',
        detail="Invalid JSON body",
    ),
    Poison(
        "metadata nested 400 deep",
        "POST",
        "/threads",
        b'{"metadata": {"x": ' + DEEP.encode() + b"}}",
        detail="nested deeper than 64",
    ),
    Poison(
        "NaN in thread metadata",
        "POST",
        "/threads",
        b'{"metadata": {"a": NaN}}',
        detail="Invalid JSON body",
    ),
    Poison(
        "Infinity in thread metadata",
        "POST",
        "/threads",
        b'{"metadata": {"a": -Infinity}}',
        detail="Invalid JSON body",
    ),
    Poison(
        "invalid UTF-8 (an encoded surrogate)",
        "POST",
        "/threads",
        b'{"metadata": {"a": "\xed\xa0\x80"}}',
        detail="UTF-8",
    ),
    Poison(
        "integer beyond int64 in metadata",
        "POST",
        "/threads",
        b'{"metadata": {"a": 18446744073709551615}}',
        detail="64-bit",
    ),
    Poison("huge thread ttl", "POST", "/threads", b'{"ttl": 1e300}', detail="ttl"),
    Poison("negative thread ttl", "POST", "/threads", b'{"ttl": {"ttl": -5}}', detail="ttl"),
    Poison("huge ttl on patch", "PATCH", "/threads/{tid}", b'{"ttl": 1e300}', detail="ttl"),
    Poison(
        "NaN in a patch",
        "PATCH",
        "/threads/{tid}",
        b'{"metadata": {"a": NaN}}',
        detail="Invalid JSON body",
    ),
    Poison(
        "lone surrogate in a search filter",
        "POST",
        "/threads/search",
        b'{"metadata": {"x": "\\ud800"}}',
        detail="surrogate",
    ),
    Poison(
        "filter integer beyond int64",
        "POST",
        "/threads/search",
        b'{"metadata": {"a": 18446744073709551615}}',
        detail="64-bit",
    ),
    Poison(
        "offset beyond int64",
        "POST",
        "/threads/search",
        b'{"offset": ' + BIG_INT.encode() + b"}",
        detail="offset",
    ),
    Poison(
        "count filter integer beyond int64",
        "POST",
        "/threads/count",
        b'{"metadata": {"a": 18446744073709551615}}',
        detail="64-bit",
    ),
    Poison(
        "extract path of brackets",
        "POST",
        "/threads/search",
        b'{"extract": {"x": "[[["}}',
        detail="extract",
    ),
    Poison(
        "extract path '$' (the whole thread, recursively)",
        "POST",
        "/threads/search",
        b'{"extract": {"x": "$"}}',
        detail="extract",
    ),
    Poison(
        "numeric checkpoint_ns (state)",
        "POST",
        "/threads/{tid}/state/checkpoint",
        b'{"checkpoint": {"checkpoint_ns": 5}}',
        detail="checkpoint_ns",
    ),
    Poison(
        "numeric checkpoint_ns (history)",
        "POST",
        "/threads/{tid}/history",
        b'{"checkpoint": {"checkpoint_ns": 5}}',
        detail="checkpoint_ns",
    ),
    Poison(
        "numeric checkpoint_ns (update)",
        "POST",
        "/threads/{tid}/state",
        b'{"values": {}, "checkpoint": {"checkpoint_ns": 5}}',
        detail="checkpoint_ns",
    ),
    Poison(
        "numeric checkpoint_map (run)",
        "POST",
        "/threads/{tid}/runs/wait",
        b'{"assistant_id": "echo", "checkpoint": {"checkpoint_map": 5}}',
        detail="checkpoint_map",
    ),
    Poison(
        "SQL in a history filter key",
        "POST",
        "/threads/{tid}/history",
        b'{"metadata": {"a\') OR 1=1 --": 1}}',
        detail="filter key",
    ),
    Poison(
        "lone surrogate in a run input",
        "POST",
        "/threads/{tid}/runs/wait",
        b'{"assistant_id": "echo", "input": {"messages": [{"content": "\\ud800"}]}}',
        detail="surrogate",
    ),
    Poison(
        "runs list offset beyond int64",
        "GET",
        "/threads/{tid}/runs?offset=" + BIG_INT,
        detail="offset",
    ),
    Poison(
        "Last-Event-ID beyond int64 (run)",
        "GET",
        "/threads/{tid}/runs/{rid}/stream",
        headers={"Last-Event-ID": BIG_INT},
        detail="Last-Event-ID",
    ),
    Poison(
        "Last-Event-ID beyond int64 (thread)",
        "GET",
        "/threads/{tid}/stream",
        headers={"Last-Event-ID": BIG_INT},
        detail="Last-Event-ID",
    ),
    Poison(
        "lone surrogate in a store key",
        "PUT",
        "/store/items",
        b'{"namespace": ["docs"], "key": "\\ud800", "value": {}}',
        detail="surrogate",
    ),
    Poison(
        "store value nested 400 deep",
        "PUT",
        "/store/items",
        b'{"namespace": ["docs"], "key": "deep", "value": {"x": ' + DEEP.encode() + b"}}",
        detail="nested deeper than 64",
    ),
    Poison(
        "NaN in a store value",
        "PUT",
        "/store/items",
        b'{"namespace": ["docs"], "key": "nan", "value": {"x": NaN}}',
        detail="Invalid JSON body",
    ),
    Poison(
        "huge store ttl",
        "PUT",
        "/store/items",
        b'{"namespace": ["docs"], "key": "t1", "value": {}, "ttl": 1e300}',
        detail="ttl",
    ),
    Poison(
        "negative store ttl",
        "PUT",
        "/store/items",
        b'{"namespace": ["docs"], "key": "t2", "value": {}, "ttl": -1}',
        detail="ttl",
    ),
    Poison(
        "NUL in a namespace label",
        "PUT",
        "/store/items",
        b'{"namespace": ["a\\u0000b"], "key": "k", "value": {}}',
        detail="NUL",
    ),
    Poison(
        "reserved root namespace",
        "PUT",
        "/store/items",
        b'{"namespace": ["langgraph"], "key": "k", "value": {}}',
        detail="reserved",
    ),
    Poison(
        "NUL in a store key (query)", "GET", "/store/items?namespace=docs&key=a%00b", detail="NUL"
    ),
    Poison(
        "quote in a store filter key",
        "POST",
        "/store/items/search",
        b'{"filter": {"a\'b": 1}}',
        detail="filter key",
    ),
    Poison(
        "SQL in a store filter key",
        "POST",
        "/store/items/search",
        b'{"filter": {"x\') OR 1=1 --": 1}}',
        detail="filter key",
    ),
    Poison(
        "unknown store filter operator",
        "POST",
        "/store/items/search",
        b'{"filter": {"n": {"$regex": "a"}}}',
        detail="operator",
    ),
    Poison(
        "lone surrogate in a store filter",
        "POST",
        "/store/items/search",
        b'{"filter": {"n": "\\ud800"}}',
        detail="surrogate",
    ),
    Poison(
        "store search offset beyond int64",
        "POST",
        "/store/items/search",
        b'{"offset": ' + BIG_INT.encode() + b"}",
        detail="offset",
    ),
    Poison(
        "namespaces max_depth beyond int64",
        "POST",
        "/store/namespaces",
        b'{"max_depth": ' + BIG_INT.encode() + b"}",
        detail="max_depth",
    ),
    Poison(
        "NaN in assistant metadata",
        "POST",
        "/assistants",
        b'{"graph_id": "echo", "metadata": {"a": NaN}}',
        detail="Invalid JSON body",
    ),
    Poison(
        "lone surrogate in an assistant search",
        "POST",
        "/assistants/search",
        b'{"metadata": {"x": "\\ud800"}}',
        detail="surrogate",
    ),
    Poison(
        "assistant search offset beyond int64",
        "POST",
        "/assistants/search",
        b'{"offset": ' + BIG_INT.encode() + b"}",
        detail="offset",
    ),
    Poison(
        "assistant version beyond int64",
        "POST",
        "/assistants/echo/latest",
        b'{"version": ' + BIG_INT.encode() + b"}",
        detail="version",
    ),
    Poison(
        "NaN in a cron payload",
        "POST",
        "/runs/crons",
        b'{"assistant_id": "echo", "schedule": "* * * * *", "input": {"a": NaN}}',
        detail="Invalid JSON body",
    ),
    Poison(
        "cron search offset beyond int64",
        "POST",
        "/runs/crons/search",
        b'{"offset": ' + BIG_INT.encode() + b"}",
        detail="offset",
    ),
]


def _counts(http: httpx.Client) -> tuple[int, int, int]:
    """Threads, assistants and crons: an attack must not add any."""
    return (
        http.post("/threads/count", json={}).json(),
        http.post("/assistants/count", json={}).json(),
        http.post("/runs/crons/count", json={}).json(),
    )


def assert_searches_work(http: httpx.Client) -> None:
    """The requests a poisoned row used to break for everyone."""
    checks = [
        ("/threads/search", {}),
        ("/threads/search", {"metadata": {"kind": "victim"}}),
        ("/threads/search", {"metadata": {"a": 1}, "values": {"x": [1]}}),
        ("/threads/count", {"metadata": {"a": 1}}),
        ("/store/items/search", {"namespace_prefix": ["docs"], "filter": {"n": 1}}),
        ("/store/items/search", {}),
        ("/store/namespaces", {}),
        ("/assistants/search", {"metadata": {"created_by": "system"}}),
        ("/runs/crons/search", {}),
    ]
    for path, body in checks:
        r = http.post(path, json=body)
        assert r.status_code == 200, f"{path} {body} -> {r.status_code} {r.text[:300]}"
    found = http.post("/threads/search", json={"metadata": {"kind": "victim"}}).json()
    assert len(found) == 1
    docs = http.post("/store/items/search", json={"namespace_prefix": ["docs"]}).json()["items"]
    assert [i["key"] for i in docs] == ["k"]


def _error_schema(openapi: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    """The 422 body schema the served OpenAPI documents for this operation (refs resolved)."""
    template = "/api/langgraph" + path.split("?", 1)[0]
    for name, ops in openapi["paths"].items():
        pattern = name.split("/")
        parts = template.split("/")
        if len(pattern) != len(parts):
            continue
        if all(p == q or p.startswith("{") for p, q in zip(pattern, parts, strict=True)):
            op = ops.get(method.lower())
            if op is None:
                continue
            schema = op["responses"]["422"]["content"]["application/json"]["schema"]
            return {**schema, "components": openapi["components"]}
    raise AssertionError(f"{method} {path} is not in the served OpenAPI")


@pytest.mark.parametrize("poison", POISONS, ids=[p.name for p in POISONS])
def test_poison_is_refused_and_searches_still_work(world: World, poison: Poison) -> None:
    path = poison.path.format(tid=world.thread_id, rid=world.run_id)
    headers = {"content-type": "application/json", **poison.headers}
    with world.server.http(base_url=world.api, timeout=60) as http:
        before = _counts(http)
        with assert_responsive(world.server) as probes:
            r = http.request(poison.method, path, content=poison.body, headers=headers)
            probes.wait_for(2)  # /health answered while (and after) it ran
        assert r.status_code == poison.status, f"{poison.name}: {r.status_code} {r.text[:300]}"
        detail = r.json()["detail"]
        assert isinstance(detail, str) and poison.detail in detail, detail
        jsonschema.validate(r.json(), _error_schema(world.openapi, poison.method, poison.path))
        assert _counts(http) == before, "a refused request wrote something"
        assert_searches_work(http)


def test_openapi_documents_the_real_422_body(world: World) -> None:
    """Every documented 422 is `{"detail": string}` — what the handlers really send."""
    schemas = world.openapi["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    assert schemas["ErrorResponse"]["properties"]["detail"]["type"] == "string"
    documented = 0
    for ops in world.openapi["paths"].values():
        for op in ops.values():
            answer = op.get("responses", {}).get("422")
            if answer is not None:
                ref = answer["content"]["application/json"]["schema"]
                assert ref == {"$ref": "#/components/schemas/ErrorResponse"}
                documented += 1
    assert documented > 20
    # FastAPI's own validation (a wrong type) and a bad JSON body, checked against it.
    with world.server.http(base_url=world.api, timeout=30) as http:
        for r in (
            http.post("/threads/search", json={"limit": "many"}),
            http.post("/threads", content=b"{", headers={"content-type": "application/json"}),
            http.post("/assistants/search", json={"offset": -1}),
        ):
            assert r.status_code == 422, r.text
            jsonschema.validate(r.json(), _error_schema(world.openapi, "POST", "/threads/search"))


def test_well_formed_edge_values_still_work(world: World) -> None:
    """What the bounds keep: int64 extremes, deep-but-allowed nesting, real unicode."""
    nested: Any = "leaf"
    for _ in range(60):
        nested = {"n": nested}
    with world.server.http(base_url=world.api, timeout=30) as http:
        made = http.post(
            "/threads",
            json={
                "metadata": {
                    "big": 2**63 - 1,
                    "small": -(2**63),
                    "emoji": "\U0001f98c",
                    "deep": nested,
                }
            },
        )
        assert made.status_code == 200, made.text
        tid = made.json()["thread_id"]
        hits = http.post("/threads/search", json={"metadata": {"big": 2**63 - 1}}).json()
        assert [t["thread_id"] for t in hits] == [tid]
        page = http.post("/threads/search", json={"offset": 2**63 - 1, "limit": 1})
        assert page.status_code == 200 and page.json() == []
        assert http.post("/threads", json={"ttl": 0.5}).status_code == 200
        put = http.put(
            "/store/items",
            json={
                "namespace": ["edge"],
                "key": "\u00e9t\u00e9",
                "value": {"deep": nested},
                "ttl": 60,
            },
        )
        assert put.status_code == 204, put.text
        got = http.get("/store/items", params={"namespace": "edge", "key": "\u00e9t\u00e9"}).json()
        assert got["value"]["deep"] == nested
        ok = http.post("/store/items/search", json={"filter": {"deep.n.n": {"$ne": None}}})
        assert ok.status_code == 200, ok.text
        assert_searches_work(http)
        http.delete(f"/threads/{tid}")
        http.request("DELETE", "/store/items", json={"namespace": ["edge"], "key": "\u00e9t\u00e9"})


def _nest(levels: int) -> Any:
    """A JSON value with exactly `levels` levels of objects ({} is one level)."""
    value: Any = {}
    for _ in range(levels - 1):
        value = {"n": value}
    return value


def test_depth_limit_is_exact(world: World) -> None:
    """The body itself is level 1: 64 levels in all are accepted, 65 are refused."""
    with world.server.http(base_url=world.api, timeout=30) as http:
        before = _counts(http)
        refused = http.post("/threads", json={"metadata": _nest(64)})
        assert refused.status_code == 422
        assert "nested deeper than 64" in refused.json()["detail"]
        assert _counts(http) == before
        accepted = http.post("/threads", json={"metadata": _nest(63)})
        assert accepted.status_code == 200, accepted.text
        assert accepted.json()["metadata"] == _nest(63)
        http.delete(f"/threads/{accepted.json()['thread_id']}")
        assert_searches_work(http)
