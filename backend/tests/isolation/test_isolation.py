"""Two users never see each other's data: bob walks every endpoint against alice's thread,
runs, crons, assistant and files with the official SDK and gets 404 (not 403), and search
and count never return them. Admins see everyone's only when they ask."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient

from isolation.appkit import App
from support.sdk import as_state, wire

HUMAN: dict[str, Any] = {"messages": [{"role": "human", "content": "hi"}]}


@dataclass
class Alices:
    thread_id: str
    run_id: str
    checkpoint_id: str
    stateless_run_id: str
    cron_id: str
    assistant_id: str
    upload: str


async def _alice(app: App) -> Alices:
    alice = app.sdk("alice")
    thread = await alice.threads.create(metadata={"project": "x"})
    tid = thread["thread_id"]
    await alice.runs.wait(tid, "echo", input=HUMAN)
    (run,) = await alice.runs.list(tid)
    state = await alice.threads.get_state(tid)
    stateless = await alice.runs.create(None, "echo", input=HUMAN, on_completion="keep")
    await alice.runs.join(stateless["thread_id"], stateless["run_id"])
    cron = await alice.crons.create_for_thread(tid, "echo", schedule="0 0 1 1 *", input=HUMAN)
    assistant = await alice.assistants.create("echo", name="alice's", metadata={"o": "a"})
    async with app.http("alice") as http:
        up = await http.post(
            f"/api/threads/{tid}/uploads", files={"files": ("notes.txt", b"secret", "text/plain")}
        )
        assert up.status_code == 200, up.text
    checkpoint_id = state["checkpoint"]["checkpoint_id"]
    assert checkpoint_id is not None
    return Alices(
        thread_id=tid,
        run_id=run["run_id"],
        checkpoint_id=checkpoint_id,
        stateless_run_id=stateless["run_id"],
        cron_id=wire(cron)["cron_id"],  # the SDK types the cron a Run
        assistant_id=assistant["assistant_id"],
        upload="notes.txt",
    )


async def _drain(stream: AsyncIterator[Any] | Awaitable[AsyncIterator[Any]]) -> None:
    if inspect.isawaitable(stream):  # threads.join_stream is awaited first
        stream = await stream
    async for _ in stream:
        pass


Call = Callable[[LangGraphClient, httpx.AsyncClient, Alices], Awaitable[Any]]


async def _raw(http: httpx.AsyncClient, method: str, path: str, **kw: Any) -> None:
    response = await http.request(method, path, **kw)
    response.raise_for_status()


LG = "/api/langgraph"
# Every endpoint that addresses one of alice's resources, as bob calls it.
ENDPOINTS: dict[str, Call] = {
    "threads.get": lambda c, h, a: c.threads.get(a.thread_id),
    "threads.update": lambda c, h, a: c.threads.update(a.thread_id, metadata={"p": 1}),
    "threads.delete": lambda c, h, a: c.threads.delete(a.thread_id),
    "threads.copy": lambda c, h, a: c.threads.copy(a.thread_id),
    "threads.get_state": lambda c, h, a: c.threads.get_state(a.thread_id),
    "threads.get_state@id": lambda c, h, a: c.threads.get_state(
        a.thread_id, checkpoint_id=a.checkpoint_id
    ),
    # The API takes a partial checkpoint; the SDK's Checkpoint TypedDict wants every key.
    "threads.get_state@checkpoint": lambda c, h, a: c.threads.get_state(
        a.thread_id,
        checkpoint={"checkpoint_id": a.checkpoint_id},  # pyright: ignore[reportArgumentType]
    ),
    "threads.update_state": lambda c, h, a: c.threads.update_state(a.thread_id, {"turns": 9}),
    "threads.get_history": lambda c, h, a: c.threads.get_history(a.thread_id),
    "GET history": lambda c, h, a: _raw(h, "GET", f"{LG}/threads/{a.thread_id}/history"),
    "threads.join_stream": lambda c, h, a: _drain(c.threads.join_stream(a.thread_id)),
    "runs.create": lambda c, h, a: c.runs.create(a.thread_id, "echo", input=HUMAN),
    "runs.create if_not_exists": lambda c, h, a: c.runs.create(
        a.thread_id, "echo", input=HUMAN, if_not_exists="create"
    ),
    "runs.stream": lambda c, h, a: _drain(c.runs.stream(a.thread_id, "echo", input=HUMAN)),
    "runs.wait": lambda c, h, a: c.runs.wait(a.thread_id, "echo", input=HUMAN),
    "runs.list": lambda c, h, a: c.runs.list(a.thread_id),
    "runs.get": lambda c, h, a: c.runs.get(a.thread_id, a.run_id),
    "runs.join": lambda c, h, a: c.runs.join(a.thread_id, a.run_id),
    "runs.join_stream": lambda c, h, a: _drain(c.runs.join_stream(a.thread_id, a.run_id)),
    "runs.cancel": lambda c, h, a: c.runs.cancel(a.thread_id, a.run_id),
    "runs.delete": lambda c, h, a: c.runs.delete(a.thread_id, a.run_id),
    "runs.cancel_many thread": lambda c, h, a: c.runs.cancel_many(
        thread_id=a.thread_id, run_ids=[a.run_id]
    ),
    "runs.cancel_many ids": lambda c, h, a: _raw(
        h, "POST", f"{LG}/runs/cancel", json={"run_ids": [a.run_id], "status": "all"}
    ),
    "GET stateless run": lambda c, h, a: _raw(h, "GET", f"{LG}/runs/{a.stateless_run_id}"),
    "GET stateless run stream": lambda c, h, a: _raw(
        h, "GET", f"{LG}/runs/{a.stateless_run_id}/stream"
    ),
    "crons.create_for_thread": lambda c, h, a: c.crons.create_for_thread(
        a.thread_id, "echo", schedule="0 0 1 1 *"
    ),
    "GET cron": lambda c, h, a: _raw(h, "GET", f"{LG}/runs/crons/{a.cron_id}"),
    "crons.update": lambda c, h, a: c.crons.update(a.cron_id, schedule="0 0 2 1 *"),
    "crons.delete": lambda c, h, a: c.crons.delete(a.cron_id),
    "assistants.get": lambda c, h, a: c.assistants.get(a.assistant_id),
    "assistants.update": lambda c, h, a: c.assistants.update(a.assistant_id, name="mine"),
    "assistants.delete": lambda c, h, a: c.assistants.delete(a.assistant_id),
    "assistants.get_graph": lambda c, h, a: c.assistants.get_graph(a.assistant_id),
    "assistants.get_schemas": lambda c, h, a: c.assistants.get_schemas(a.assistant_id),
    "assistants.get_subgraphs": lambda c, h, a: c.assistants.get_subgraphs(a.assistant_id),
    "assistants.get_versions": lambda c, h, a: c.assistants.get_versions(a.assistant_id),
    "assistants.set_latest": lambda c, h, a: c.assistants.set_latest(a.assistant_id, 1),
    "run on alice's assistant": lambda c, h, a: c.runs.create(None, a.assistant_id, input=HUMAN),
    "uploads list": lambda c, h, a: _raw(h, "GET", f"/api/threads/{a.thread_id}/uploads"),
    "uploads post": lambda c, h, a: _raw(
        h,
        "POST",
        f"/api/threads/{a.thread_id}/uploads",
        files={"files": ("x.txt", b"x", "text/plain")},
    ),
    "uploads delete": lambda c, h, a: _raw(
        h, "DELETE", f"/api/threads/{a.thread_id}/uploads/{a.upload}"
    ),
    "artifact": lambda c, h, a: _raw(
        h, "GET", f"/api/threads/{a.thread_id}/artifacts/uploads/{a.upload}"
    ),
    "artifact HEAD": lambda c, h, a: _raw(
        h, "HEAD", f"/api/threads/{a.thread_id}/artifacts/uploads/{a.upload}"
    ),
    "token usage": lambda c, h, a: _raw(h, "GET", f"/api/threads/{a.thread_id}/token-usage"),
}


async def _status(call: Call, client: LangGraphClient, http: httpx.AsyncClient, a: Alices) -> int:
    try:
        await call(client, http, a)
    except httpx.HTTPStatusError as exc:
        return exc.response.status_code
    return 200


async def test_bob_gets_404_on_every_endpoint_of_alices_resources(app: App) -> None:
    a = await _alice(app)
    bob = app.sdk("bob")
    async with app.http("bob") as http:
        statuses = {name: await _status(call, bob, http, a) for name, call in ENDPOINTS.items()}
        assert statuses == dict.fromkeys(ENDPOINTS, 404)
        # Prune skips what is not bob's, as if it did not exist.
        assert await bob.threads.prune([a.thread_id]) == {"pruned_count": 0}
    # Nothing of alice's changed or went away.
    alice = app.sdk("alice")
    thread = await alice.threads.get(a.thread_id)
    assert thread["metadata"] is not None
    assert thread["metadata"].get("p") is None and thread["metadata"]["project"] == "x"
    assert [r["run_id"] for r in await alice.runs.list(a.thread_id)] == [a.run_id]
    assert (await alice.assistants.get(a.assistant_id))["name"] == "alice's"
    assert (await alice.crons.search())[0]["schedule"] == "0 0 1 1 *"
    async with app.http("alice") as http:
        art = await http.get(f"/api/threads/{a.thread_id}/artifacts/uploads/{a.upload}")
        assert art.status_code == 200 and art.content == b"secret"


async def test_search_and_count_exclude_other_users(app: App) -> None:
    a = await _alice(app)
    bob = app.sdk("bob")
    own = await bob.threads.create(metadata={"project": "x"})
    await bob.assistants.create("echo", name="bob's", metadata={"o": "b"})

    assert [t["thread_id"] for t in await bob.threads.search(limit=100)] == [own["thread_id"]]
    assert await bob.threads.search(metadata={"project": "x"}) == [own]
    assert await bob.threads.count() == 1
    assert await bob.threads.search(ids=[a.thread_id]) == []
    names = {x["name"] for x in await bob.assistants.search(limit=100)}
    assert "bob's" in names and "alice's" not in names
    assert "echo" in names  # the system assistants are shared
    assert await bob.assistants.count(metadata={"o": "a"}) == 0
    assert await bob.crons.search() == [] and await bob.crons.count() == 0
    # alice sees hers, not bob's.
    alice = app.sdk("alice")
    # (plus the temporary thread of her stateless run, kept with on_completion="keep")
    hers = {t["thread_id"] for t in await alice.threads.search(limit=100)}
    assert a.thread_id in hers and own["thread_id"] not in hers


async def test_system_assistants_are_shared_read_only(app: App) -> None:
    bob = app.sdk("bob")
    echo = await bob.assistants.get("echo")
    assert echo["metadata"] is not None and echo["metadata"]["created_by"] == "system"
    for call in (
        lambda: bob.assistants.update("echo", name="hijacked"),
        lambda: bob.assistants.delete(echo["assistant_id"]),
    ):
        with pytest.raises(httpx.HTTPStatusError) as err:
            await call()
        assert err.value.response.status_code == 403
    assert (await bob.assistants.get("echo"))["name"] == "echo"
    # Everyone can still run it.
    thread = await bob.threads.create()
    result = await bob.runs.wait(thread["thread_id"], "echo", input=HUMAN)
    assert as_state(result)["messages"][-1]["content"] == "echo: hi"


async def test_admin_sees_everyone_only_when_asking(app: App) -> None:
    a = await _alice(app)
    admin = app.sdk("admin")
    with pytest.raises(httpx.HTTPStatusError) as err:
        await admin.threads.get(a.thread_id)
    assert err.value.response.status_code == 404
    assert await admin.threads.search() == []

    everyone = app.sdk("admin", **{"X-Pronghorn-All-Users": "true"})
    assert (await everyone.threads.get(a.thread_id))["thread_id"] == a.thread_id
    assert a.thread_id in [t["thread_id"] for t in await everyone.threads.search(limit=100)]
    assert (await everyone.assistants.get(a.assistant_id))["name"] == "alice's"
    assert [c["cron_id"] for c in await everyone.crons.search()] == [a.cron_id]
    async with app.http("admin") as http:
        r = await http.post(f"{LG}/threads/search", params={"all_users": "true"}, json={})
        assert a.thread_id in [t["thread_id"] for t in r.json()]
        r = await http.get(f"/api/threads/{a.thread_id}/uploads")
        assert r.status_code == 404

    # The header means nothing from a user who is not an admin.
    bob_asking = app.sdk("bob", **{"X-Pronghorn-All-Users": "true"})
    assert await bob_asking.threads.search() == []
    with pytest.raises(httpx.HTTPStatusError) as err:
        await bob_asking.threads.get(a.thread_id)
    assert err.value.response.status_code == 404
