"""Store API through the official Python SDK (and raw HTTP for status codes)."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from langgraph_sdk.client import LangGraphClient

from support.inproc import InProcessServer
from support.sdk import wire


async def test_put_get_delete(client: LangGraphClient, server: InProcessServer) -> None:
    ns = ["users", uuid.uuid4().hex, "prefs"]
    await client.store.put_item(ns, "theme", {"color": "blue"})
    item = await client.store.get_item(ns, "theme")
    assert item["namespace"] == ns and item["key"] == "theme" and item["value"] == {"color": "blue"}
    assert wire(item)["created_at"].endswith("+00:00") and item["updated_at"]
    await client.store.put_item(ns, "theme", {"color": "red"}, index=False)  # overwrite
    assert (await client.store.get_item(ns, "theme"))["value"] == {"color": "red"}
    await client.store.delete_item(ns, "theme")
    assert await client.store.get_item(ns, "theme") is None
    async with server.ahttp(base_url=server.api) as http:
        r = await http.get("/store/items", params={"namespace": ".".join(ns), "key": "theme"})
        assert r.status_code == 200 and r.json() is None  # Q6: the spec documents no 404
        r = await http.put("/store/items", json={"namespace": ns, "key": "k", "value": {}})
        assert r.status_code == 204 and r.content == b""
        r = await http.request("DELETE", "/store/items", json={"namespace": ns, "key": "k"})
        assert r.status_code == 204


async def test_validation(server: InProcessServer) -> None:
    async with server.ahttp(base_url=server.api) as http:
        for bad in (["a", ""], ["a.b"], []):
            r = await http.put("/store/items", json={"namespace": bad, "key": "k", "value": {}})
            assert r.status_code == 422, bad
            assert r.json()["detail"]
        r = await http.put("/store/items", json={"namespace": ["a"], "key": "k", "value": 3})
        assert r.status_code == 422
        r = await http.put("/store/items", json={"namespace": ["a"], "value": {}})
        assert r.status_code == 422
        r = await http.get("/store/items", params={"namespace": "a..b", "key": "k"})
        assert r.status_code == 422
        r = await http.post("/store/items/search", json={"namespace_prefix": ["a.b"]})
        assert r.status_code == 422


async def test_search_and_namespaces(client: LangGraphClient) -> None:
    root = uuid.uuid4().hex
    for i in range(4):
        value = {"i": i, "even": i % 2 == 0}
        await client.store.put_item([root, "docs", f"n{i % 2}"], f"k{i}", value)
    found = await client.store.search_items([root])
    assert len(found["items"]) == 4 and "score" in found["items"][0]
    evens = await client.store.search_items([root], filter={"even": True})
    assert sorted(i["value"]["i"] for i in evens["items"]) == [0, 2]
    page = await client.store.search_items([root], limit=3, offset=2)
    assert len(page["items"]) == 2
    spaces = await client.store.list_namespaces(prefix=[root])
    assert sorted(spaces["namespaces"]) == [[root, "docs", "n0"], [root, "docs", "n1"]]
    assert (await client.store.list_namespaces(prefix=[root], max_depth=2))["namespaces"] == [
        [root, "docs"]
    ]
    only = await client.store.list_namespaces(prefix=[root], suffix=["n1"])
    assert only["namespaces"] == [[root, "docs", "n1"]]


async def test_item_ttl_expires(client: LangGraphClient) -> None:
    ns = ["ttl", uuid.uuid4().hex]
    # 0.6 s: the API takes fractional minutes; the SDK types `ttl` int
    await client.store.put_item(ns, "short", {"v": 1}, ttl=0.01)  # pyright: ignore[reportArgumentType]
    await client.store.put_item(ns, "long", {"v": 2}, ttl=60)
    assert (await client.store.get_item(ns, "short"))["value"] == {"v": 1}
    deadline = time.monotonic() + 15
    while await client.store.get_item(ns, "short") is not None:
        assert time.monotonic() < deadline, "item with a 0.6 s TTL never expired"
        await asyncio.sleep(0.3)
    assert (await client.store.get_item(ns, "long"))["value"] == {"v": 2}
    left = await client.store.search_items(ns)
    assert [i["key"] for i in left["items"]] == ["long"]


@pytest.mark.parametrize("refresh", [True, False])
async def test_refresh_ttl_flag_accepted(client: LangGraphClient, refresh: bool) -> None:
    ns = ["refresh", uuid.uuid4().hex]
    await client.store.put_item(ns, "k", {"v": 1}, ttl=10)
    assert (await client.store.get_item(ns, "k", refresh_ttl=refresh))["value"] == {"v": 1}
    assert len((await client.store.search_items(ns, refresh_ttl=refresh))["items"]) == 1
