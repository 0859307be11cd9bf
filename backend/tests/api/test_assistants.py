"""Assistants API through the official Python SDK against a live server."""

from __future__ import annotations

import uuid

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError

from api.conftest import ECHO_ASSISTANT_ID
from pronghorn.ids import system_assistant_id
from support.inproc import InProcessServer


async def test_system_assistants(client: LangGraphClient) -> None:
    echo = await client.assistants.get("echo")
    assert echo["assistant_id"] == ECHO_ASSISTANT_ID
    assert echo["metadata"] == {"created_by": "system"} and echo["name"] == "echo"
    assert (await client.assistants.get(ECHO_ASSISTANT_ID))["graph_id"] == "echo"
    lead = await client.assistants.get("lead_agent")
    assert lead["assistant_id"] == system_assistant_id("lead_agent")
    found = await client.assistants.search(graph_id="echo", metadata={"created_by": "system"})
    assert [a["assistant_id"] for a in found] == [ECHO_ASSISTANT_ID]


async def test_create_get_conflict(client: LangGraphClient) -> None:
    aid = str(uuid.uuid4())
    made = await client.assistants.create(
        "echo", assistant_id=aid, config={"tags": ["x"]}, metadata={"team": "a"}, name="Bot"
    )
    assert made["assistant_id"] == aid and made["version"] == 1 and made["name"] == "Bot"
    assert made["config"] == {"tags": ["x"]} and made["context"] == {}
    with pytest.raises(ConflictError):
        await client.assistants.create("echo", assistant_id=aid)
    same = await client.assistants.create("echo", assistant_id=aid, if_exists="do_nothing")
    assert same["name"] == "Bot"
    default = await client.assistants.create("echo")
    assert default["name"] == "Untitled" and uuid.UUID(default["assistant_id"])


async def test_errors(client: LangGraphClient, server: InProcessServer) -> None:
    with pytest.raises(NotFoundError):
        await client.assistants.get(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        await client.assistants.create("no_such_graph")
    with pytest.raises(UnprocessableEntityError):
        await client.assistants.create("echo", assistant_id="not-a-uuid")
    with pytest.raises(NotFoundError):
        await client.assistants.update(str(uuid.uuid4()), name="x")
    with pytest.raises(NotFoundError):
        await client.assistants.delete(str(uuid.uuid4()))
    async with server.ahttp(base_url=server.api) as http:
        bad = await http.post("/assistants", json={"config": {}})
        assert bad.status_code == 422 and "graph_id" in bad.json()["detail"]
        bad = await http.post("/assistants/search", json={"limit": "many"})
        assert bad.status_code == 422 and bad.json()["detail"]


async def test_patch_versions_latest(client: LangGraphClient) -> None:
    made = await client.assistants.create("echo", metadata={"a": 1, "keep": True}, name="v1")
    aid = made["assistant_id"]
    v2 = await client.assistants.update(aid, metadata={"a": 2}, name="v2")
    assert v2["version"] == 2 and v2["name"] == "v2"
    assert v2["metadata"] == {"a": 2, "keep": True}  # merged
    v3 = await client.assistants.update(aid, description="third", config={"tags": ["t"]})
    assert v3["version"] == 3 and v3["name"] == "v2" and v3["description"] == "third"
    versions = await client.assistants.get_versions(aid)
    assert [v["version"] for v in versions] == [3, 2, 1]
    only = await client.assistants.get_versions(aid, metadata={"a": 1})
    assert [v["version"] for v in only] == [1]
    back = await client.assistants.set_latest(aid, 1)
    assert back["version"] == 1 and back["name"] == "v1" and back["metadata"] is not None
    assert back["metadata"]["a"] == 1
    assert (await client.assistants.get(aid))["name"] == "v1"
    with pytest.raises(NotFoundError):
        await client.assistants.set_latest(aid, 99)


async def test_search_count_pagination(client: LangGraphClient, server: InProcessServer) -> None:
    tag = uuid.uuid4().hex
    for i in range(5):
        await client.assistants.create("echo", name=f"Pager {tag} {i}", metadata={"tag": tag})
    found = await client.assistants.search(metadata={"tag": tag}, limit=2, sort_by="name")
    assert len(found) == 2 and found[0]["name"].endswith(" 4")  # default order desc
    asc = await client.assistants.search(
        metadata={"tag": tag}, sort_by="name", sort_order="asc", select=["name"]
    )
    assert [a["name"][-1] for a in asc] == list("01234") and set(asc[0]) == {"name"}
    assert len(await client.assistants.search(name=f"pager {tag.upper()}")) == 5  # icase
    assert await client.assistants.count(metadata={"tag": tag}) == 5
    assert await client.assistants.count(graph_id="echo", name=tag) == 5
    assert await client.assistants.search(graph_id="no_such_graph") == []  # Q4
    page = await client.assistants.search(
        metadata={"tag": tag}, limit=2, offset=2, response_format="object"
    )
    assert len(page["assistants"]) == 2 and page["next"] == "4"
    async with server.ahttp(base_url=server.api) as http:
        r = await http.post("/assistants/search", json={"metadata": {"tag": tag}, "limit": 3})
        assert r.headers["X-Pagination-Total"] == "5" and r.headers["X-Pagination-Next"] == "3"
        r = await http.post(
            "/assistants/search", json={"metadata": {"tag": tag}, "limit": 3, "offset": 3}
        )
        assert len(r.json()) == 2 and "X-Pagination-Next" not in r.headers


async def test_delete_with_threads(client: LangGraphClient) -> None:
    made = await client.assistants.create("echo")
    aid = made["assistant_id"]
    mine = await client.threads.create(metadata={"assistant_id": aid})
    other = await client.threads.create(metadata={"assistant_id": "someone-else"})
    await client.assistants.delete(aid, delete_threads=True)
    with pytest.raises(NotFoundError):
        await client.assistants.get(aid)
    with pytest.raises(NotFoundError):
        await client.threads.get(mine["thread_id"])
    assert (await client.threads.get(other["thread_id"]))["thread_id"] == other["thread_id"]
    kept = await client.assistants.create("echo")
    await client.assistants.delete(kept["assistant_id"])
    with pytest.raises(NotFoundError):
        await client.assistants.get(kept["assistant_id"])


async def test_graph_schemas_subgraphs(client: LangGraphClient) -> None:
    graph = await client.assistants.get_graph("echo")
    ids = {n["id"] for n in graph["nodes"]}
    assert {"__start__", "prepare", "respond", "__end__"} <= ids
    assert {"source": "__start__", "target": "prepare"}.items() <= graph["edges"][0].items()
    assert (await client.assistants.get_graph(ECHO_ASSISTANT_ID, xray=1))["nodes"]
    schemas = await client.assistants.get_schemas("echo")
    assert schemas["graph_id"] == "echo"
    assert schemas["input_schema"] is not None and schemas["state_schema"] is not None
    assert "messages" in schemas["input_schema"]["properties"]
    assert "turns" in schemas["state_schema"]["properties"]
    assert schemas["context_schema"] is None
    assert await client.assistants.get_subgraphs("echo") == {}
    assert await client.assistants.get_subgraphs("echo", recurse=True) == {}
    with pytest.raises(NotFoundError):
        await client.assistants.get_graph(str(uuid.uuid4()))
