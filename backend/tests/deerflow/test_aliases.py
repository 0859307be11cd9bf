"""DeerFlow's own paths of the LangGraph API (`/api/threads/*`, `/api/runs/*`), its
per-run messages by run id, and stateless runs that name their thread."""

from __future__ import annotations

import uuid

from deerflow.conftest import StartApp
from deerflow.shapes import RUN_MESSAGES, assert_shape
from support.sse import sse_events


def human(text: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_thread_and_run_routes_at_deerflow_paths(make_app: StartApp) -> None:
    app = await make_app()
    async with app.http("alice") as http:
        created = await http.post("/api/threads", json={"metadata": {"deerflow_pinned": True}})
        assert created.status_code == 200, created.text
        tid = created.json()["thread_id"]
        assert (await http.get(f"/api/threads/{tid}")).json()["thread_id"] == tid
        # POST is LangGraph's thread search although GET /api/threads/search is ours
        found = (await http.post("/api/threads/search", json={"limit": 10})).json()
        assert [t["thread_id"] for t in found] == [tid]
        text_search = await http.get("/api/threads/search", params={"q": "anything"})
        assert text_search.status_code == 200, text_search.text
        assert (await http.put("/api/threads/search", json={})).status_code == 405
        patched = await http.patch(f"/api/threads/{tid}", json={"metadata": {"title": "x"}})
        assert patched.status_code == 200 and patched.json()["metadata"]["title"] == "x"

        body = {"assistant_id": "lead_agent", "input": human("hi"), "stream_mode": ["values"]}
        streamed = await http.post(f"/api/threads/{tid}/runs/stream", json=body)
        assert streamed.status_code == 200, streamed.text
        events = [event for event, _ in sse_events(streamed.text)]
        assert events[0] == "metadata" and "values" in events
        runs = (await http.get(f"/api/threads/{tid}/runs")).json()
        (run,) = runs
        assert run["status"] == "success"
        rid = run["run_id"]
        assert (await http.get(f"/api/threads/{tid}/runs/{rid}")).json()["run_id"] == rid
        state = (await http.get(f"/api/threads/{tid}/state")).json()
        assert state["values"]["messages"][-1]["content"] == "hello there"
        history = await http.post(f"/api/threads/{tid}/history", json={"limit": 1})
        assert history.status_code == 200 and len(history.json()) == 1
        assert (await http.get(f"/api/runs/{rid}")).json()["thread_id"] == tid

        # ours at the same prefix stay ours
        page = (await http.get(f"/api/threads/{tid}/messages/page")).json()
        assert set(page) == {"data", "has_more", "next_before_seq"}

        by_id = await http.get(f"/api/runs/{rid}/messages")
        assert by_id.status_code == 200, by_id.text
        assert_shape(by_id.json(), RUN_MESSAGES)
        assert [m["content"]["content"] for m in by_id.json()["data"]] == ["hi", "hello there"]
        assert by_id.json() == (await http.get(f"/api/threads/{tid}/runs/{rid}/messages")).json()
    async with app.http("bob") as http:
        assert (await http.get(f"/api/threads/{tid}")).status_code == 404
        assert (await http.get(f"/api/runs/{rid}/messages")).status_code == 404
    async with app.http(None) as http:
        assert (await http.get(f"/api/threads/{tid}")).status_code == 401
        assert (await http.post("/api/threads/search", json={})).status_code == 401


async def test_stateless_run_honours_its_thread_id(make_app: StartApp) -> None:
    app = await make_app()
    tid = str(uuid.uuid4())  # a new chat's id, not created yet
    body = {
        "assistant_id": "lead_agent",
        "input": human("hi"),
        "config": {"configurable": {"thread_id": tid}},
    }
    async with app.http("alice") as http:
        r = await http.post("/api/runs/wait", json=body)
        assert r.status_code == 200, r.text
        thread = (await http.get(f"/api/langgraph/threads/{tid}")).json()
        assert thread["thread_id"] == tid  # created, and kept (not a temporary thread)
        state = (await http.get(f"/api/langgraph/threads/{tid}/state")).json()
        assert [m["content"] for m in state["values"]["messages"]] == ["hi", "hello there"]

        streamed = await http.post("/api/runs/stream", json={**body, "input": human("again")})
        assert streamed.status_code == 200
        # relative to the LangGraph API root, as the SDKs resolve it
        assert streamed.headers["content-location"].startswith(f"/threads/{tid}/")
        state = (await http.get(f"/api/langgraph/threads/{tid}/state")).json()
        assert len(state["values"]["messages"]) == 4  # the same thread, two turns

        bad = {**body, "config": {"configurable": {"thread_id": "nope"}}}
        assert (await http.post("/api/runs/wait", json=bad)).status_code == 422
    async with app.http("bob") as http:  # alice's thread is not bob's
        assert (await http.post("/api/runs/wait", json=body)).status_code == 404
