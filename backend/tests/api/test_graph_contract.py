"""The graph-facing contract, as the reference server runs graphs (issue 9 part 8).

Typical user graphs (a `StateGraph` and a ReAct agent with a `context_schema` dataclass,
a factory building the agent from the run's context) driven through the official SDK
against a live server: a run with no context gets the schema's defaults, a factory gets a
`ServerRuntime` (with the run's context) and its `RunnableConfig`, deleting an assistant
stops its runs, and updates LangGraph rejects answer 400.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import BadRequestError, NotFoundError

from runs.runkit import wait_status
from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state, wire

GRAPHS = {
    "greeter": "testgraphs.react_context:greeter",
    "context_agent": "testgraphs.react_context:agent",
    "context_factory": "testgraphs.react_context:make_agent",
    "plain_factory": "testgraphs.react_context:make_agent_plain",
    "ctx_dataclass": "testgraphs.context_echo:dataclass_ctx",
    "ctx_typeddict": "testgraphs.context_echo:typeddict_ctx",
    "ctx_pydantic": "testgraphs.context_echo:pydantic_ctx",
    "ctx_none": "testgraphs.context_echo:no_schema",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    srv = InProcessServer(tmp_path_factory.mktemp("contract"), base_config(graphs=GRAPHS))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def client(server: InProcessServer) -> LangGraphClient:
    return server.sdk()


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def texts(state: object, kind: str) -> list[str]:
    return [m["content"] for m in as_state(state)["messages"] if m["type"] == kind]


# --- (a) no context: the context_schema's defaults --------------------------------------------


async def test_run_without_context_gets_the_schema_defaults(client: LangGraphClient) -> None:
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "greeter", input=human("hi"))
    assert texts(out, "ai") == ["hello, world"]
    out = await client.runs.wait(tid, "greeter", input=human("hi"), context={"name": "Ada"})
    assert texts(out, "ai")[-1] == "hello, Ada"  # a given field wins, the others default


async def test_react_agent_tool_reads_default_context(client: LangGraphClient) -> None:
    out = await client.runs.wait(None, "context_agent", input=human("who am I?"))
    assert texts(out, "tool") == ["user=friend"]
    assert texts(out, "ai")[-1] == "done"
    out = await client.runs.wait(
        None, "context_agent", input=human("who am I?"), context={"user_name": "Ada"}
    )
    assert texts(out, "tool") == ["user=Ada"]


async def test_stream_without_context_gets_the_schema_defaults(client: LangGraphClient) -> None:
    parts = [
        p
        async for p in client.runs.stream(None, "greeter", input=human("hi"), stream_mode="updates")
    ]
    updates = [p.data for p in parts if p.event == "updates"]
    assert updates and updates[-1]["greet"]["messages"][0]["content"] == "hello, world"
    assert not [p for p in parts if p.event == "error"]


# --- (b) a factory gets ServerRuntime (with the run's context) and its config --------------------


async def test_factory_builds_the_graph_from_the_run_context(client: LangGraphClient) -> None:
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        tid,
        "context_factory",
        input=human("hi"),
        context={"tone": "pirate", "user_name": "Ada"},
    )
    assert texts(out, "ai")[-1] == (
        f"access=threads.create_run tone=pirate user_name=Ada user=None thread={tid} store=True"
    )
    assert texts(out, "tool") == ["user=Ada"]  # the graph's own context_schema got it too
    # No context: the factory sees the context type's defaults.
    out = await client.runs.wait(tid, "context_factory", input=human("again"))
    assert "tone=plain user_name=friend" in texts(out, "ai")[-1]


async def test_factory_is_called_for_reads_without_a_run_context(
    client: LangGraphClient,
) -> None:
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(
        tid, "context_factory", input=human("hi"), context={"tone": "dry", "unknown_key": 1}
    )
    # A key the factory's context type does not declare is dropped, not fatal.
    assert (await wait_status(client, tid, run["run_id"], {"success"}))["status"] == "success"
    # threads.read: the factory's read branch builds the same topology.
    state = await client.threads.get_state(tid)
    assert "tone=dry" in texts(state["values"], "ai")[-1]
    history = await client.threads.get_history(tid, limit=2)
    assert history and wire(history[0])["checkpoint_id"] == wire(state)["checkpoint_id"]
    # assistants.read: schemas and graph come from the factory's graph.
    schemas = await client.assistants.get_schemas("context_factory")
    assert schemas["context_schema"] is not None
    assert set(schemas["context_schema"]["properties"]) == {"user_name", "tone"}
    drawn = await client.assistants.get_graph("context_factory")
    assert {"model", "tools"} <= {n["id"] for n in drawn["nodes"]}
    # threads.update: the update goes through the factory's graph.
    await client.threads.update_state(tid, human("edited"), as_node="model")
    state = await client.threads.get_state(tid)
    assert texts(state["values"], "human")[-1] == "edited"


async def test_a_factory_taking_a_plain_dict_config_and_a_runtime_serves(
    client: LangGraphClient,
) -> None:
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(
        tid,
        "plain_factory",
        input=human("hi"),
        context={"tone": "pirate", "user_name": "Ada", "not_in_schema": True},
    )
    assert (await wait_status(client, tid, run["run_id"], {"success"}))["status"] == "success"
    state = await client.threads.get_state(tid)
    assert texts(state["values"], "ai")[-1] == "graph=plain_factory tone=pirate"
    assert texts(state["values"], "tool") == ["user=Ada"]


# --- (b2) a run's context keeps only what the graph's context_schema declares ------------------


@pytest.mark.parametrize("graph", ["ctx_dataclass", "ctx_typeddict", "ctx_pydantic"])
async def test_unknown_context_keys_are_dropped(client: LangGraphClient, graph: str) -> None:
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(
        tid, graph, input=human("hi"), context={"tone": "dry", "locale": "fr", "n": 2}
    )
    done = await wait_status(client, tid, run["run_id"], {"success", "error"})
    assert done["status"] == "success"
    state = await client.threads.get_state(tid)
    seen = json.loads(texts(state["values"], "ai")[-1])
    assert seen["tone"] == "dry" and "locale" not in seen and "n" not in seen


async def test_assistant_context_merges_under_the_runs(client: LangGraphClient) -> None:
    assistant = await client.assistants.create(
        "ctx_dataclass", context={"tone": "formal", "user_name": "Ada", "stale": True}
    )
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        tid, assistant["assistant_id"], input=human("hi"), context={"tone": "dry"}
    )
    assert json.loads(texts(out, "ai")[-1]) == {"tone": "dry", "user_name": "Ada"}


async def test_a_graph_without_context_schema_gets_the_context_as_given(
    client: LangGraphClient,
) -> None:
    out = await client.runs.wait(
        None, "ctx_none", input=human("hi"), context={"anything": [1, 2], "tone": "dry"}
    )
    assert json.loads(texts(out, "ai")[-1]) == {"anything": [1, 2], "tone": "dry"}


# --- (c) deleting an assistant stops its runs ---------------------------------------------------


async def test_delete_assistant_cancels_its_inflight_runs(client: LangGraphClient) -> None:
    doomed = await client.assistants.create("echo", name="doomed")
    tid = (await client.threads.create())["thread_id"]
    other_tid = (await client.threads.create())["thread_id"]
    running = await client.runs.create(
        tid, doomed["assistant_id"], input={**human("long"), "sleep": 120}
    )
    queued = await client.runs.create(tid, doomed["assistant_id"], input=human("next"))
    bystander = await client.runs.create(other_tid, "echo", input={**human("x"), "sleep": 120})
    await wait_status(client, tid, running["run_id"], {"running"})
    await wait_status(client, other_tid, bystander["run_id"], {"running"})
    assert (await client.runs.get(tid, queued["run_id"]))["status"] == "pending"

    await client.assistants.delete(doomed["assistant_id"])

    # Settled by the time the delete answers.
    assert (await client.runs.get(tid, running["run_id"]))["status"] == "interrupted"
    assert (await client.runs.get(tid, queued["run_id"]))["status"] == "interrupted"
    assert (await client.threads.get(tid))["status"] != "busy"
    # Runs of other assistants go on.
    assert (await client.runs.get(other_tid, bystander["run_id"]))["status"] == "running"
    await client.runs.cancel(other_tid, bystander["run_id"], wait=True)
    # Deleting an assistant with no runs still works; an unknown one is 404.
    idle = await client.assistants.create("echo")
    await client.assistants.delete(idle["assistant_id"])
    with pytest.raises(NotFoundError):
        await client.assistants.delete(str(uuid.uuid4()))


# --- (d) rejected state updates are 400 ---------------------------------------------------------


async def test_rejected_state_updates_are_400(client: LangGraphClient) -> None:
    tid = (await client.threads.create(graph_id="greeter"))["thread_id"]
    with pytest.raises(BadRequestError) as unknown_node:
        await client.threads.update_state(tid, human("x"), as_node="no_such_node")
    assert "no_such_node" in str(unknown_node.value)
    with pytest.raises(BadRequestError):  # not a message: LangGraph's reducer refuses it
        await client.threads.update_state(tid, {"messages": [{"bogus": 1}]}, as_node="greet")
    with pytest.raises(BadRequestError):  # a list where the state needs a mapping
        await client.threads.update_state(tid, [1, 2], as_node="greet")  # type: ignore[arg-type]
    # Nothing was written by the rejected updates.
    assert wire(await client.threads.get_state(tid))["checkpoint_id"] is None
    ok = await client.threads.update_state(tid, human("fine"), as_node="greet")
    assert ok["checkpoint"]["checkpoint_id"]
    new_tid = str(uuid.uuid4())
    with pytest.raises(BadRequestError):  # rejected supersteps on create: 400 and no thread
        await client.threads.create(
            thread_id=new_tid,
            graph_id="greeter",
            supersteps=[{"updates": [{"values": {}, "as_node": "nope"}]}],
        )
    with pytest.raises(NotFoundError):
        await client.threads.get(new_tid)
