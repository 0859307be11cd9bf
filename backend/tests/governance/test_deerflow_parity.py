"""The REST endpoints DeerFlow's UI calls, each against its reference shape
(reference/deerflow-backend.md), scoped to the caller, and run feedback in SQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from isolation.appkit import App


def msg(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def _thread_with_two_runs(app: App) -> tuple[str, list[str]]:
    client = app.sdk("alice")
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "lead_agent", input=msg("hi"))
    await client.runs.wait(tid, "lead_agent", input=msg("use a tool"))
    runs = await client.runs.list(tid)
    return tid, [r["run_id"] for r in sorted(runs, key=lambda r: r["created_at"])]


async def test_message_pages(two_users: App) -> None:
    tid, (first, second) = await _thread_with_two_runs(two_users)
    async with two_users.http("alice") as http:
        full = (await http.get(f"/api/threads/{tid}/messages/page")).json()
        assert set(full) == {"data", "has_more", "next_before_seq"}
        assert full["has_more"] is False and full["next_before_seq"] is None
        data = full["data"]
        # hi → hello there; use a tool → AI tool call → tool result → tool used
        assert [m["seq"] for m in data] == [1, 2, 3, 4, 5, 6]
        assert [m["event_type"] for m in data] == [
            "llm.human.input",
            "llm.ai.response",
            "llm.human.input",
            "llm.ai.response",
            "llm.tool.result",
            "llm.ai.response",
        ]
        assert [m["run_id"] for m in data] == [first, first, second, second, second, second]
        assert data[1]["content"]["content"] == "hello there"
        assert all(m["category"] == "message" and m["thread_id"] == tid for m in data)
        page = (await http.get(f"/api/threads/{tid}/messages/page?limit=2")).json()
        assert [m["seq"] for m in page["data"]] == [5, 6]
        assert page["has_more"] is True and page["next_before_seq"] == 5
        older = (await http.get(f"/api/threads/{tid}/messages/page?limit=4&before_seq=5")).json()
        assert [m["seq"] for m in older["data"]] == [1, 2, 3, 4] and older["has_more"] is False
        bad = await http.get(f"/api/threads/{tid}/messages/page?after_seq=1")
        assert bad.status_code == 422 and "before_seq" in bad.json()["detail"]

        per_run = (await http.get(f"/api/threads/{tid}/runs/{second}/messages")).json()
        assert set(per_run) == {"data", "has_more"} and per_run["has_more"] is False
        assert [m["seq"] for m in per_run["data"]] == [3, 4, 5, 6]
        after = (
            await http.get(f"/api/threads/{tid}/runs/{second}/messages?after_seq=3&limit=2")
        ).json()
        assert [m["seq"] for m in after["data"]] == [4, 5] and after["has_more"] is True

        events = (await http.get(f"/api/threads/{tid}/runs/{first}/events")).json()
        assert isinstance(events, list) and events[0]["event_type"] == "metadata"
        assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
        assert all(e["run_id"] == first for e in events)
        values = (
            await http.get(f"/api/threads/{tid}/runs/{first}/events?event_types=values")
        ).json()
        assert values and {e["event_type"] for e in values} == {"values"}
        tail = (
            await http.get(
                f"/api/threads/{tid}/runs/{first}/events?after_seq={events[0]['seq']}&limit=1"
            )
        ).json()
        assert len(tail) == 1 and tail[0]["seq"] > events[0]["seq"]
    async with two_users.http("bob") as http:
        for path in (
            f"/api/threads/{tid}/messages/page",
            f"/api/threads/{tid}/runs/{first}/messages",
            f"/api/threads/{tid}/runs/{first}/events",
        ):
            r = await http.get(path)
            assert r.status_code == 404, path


async def test_uploads_list_and_limits(two_users: App) -> None:
    client = two_users.sdk("alice")
    tid = (await client.threads.create())["thread_id"]
    async with two_users.http("alice") as http:
        up = await http.post(
            f"/api/threads/{tid}/uploads", files={"files": ("Notes.TXT", b"hello", "text/plain")}
        )
        assert up.status_code == 200, up.text
        listed = (await http.get(f"/api/threads/{tid}/uploads/list")).json()
        assert listed["count"] == 1
        (f,) = listed["files"]
        assert f["filename"] == "Notes.TXT" and f["size"] == 5 and f["extension"] == "txt"
        assert f["virtual_path"] == "/mnt/user-data/uploads/Notes.TXT" == f["path"]
        assert f["artifact_url"].startswith(f"/api/threads/{tid}/artifacts/")
        ours = (await http.get(f"/api/threads/{tid}/uploads")).json()  # ours is kept
        assert ours["files"][0]["name"] == "Notes.TXT"
        limits = (await http.get(f"/api/threads/{tid}/uploads/limits")).json()
        assert limits == {"max_files": 1000, "max_file_size": 4096, "max_total_size": 10_000}
    async with two_users.http("bob") as http:
        assert (await http.get(f"/api/threads/{tid}/uploads/list")).status_code == 404
        # the limits are the server's: any signed-in caller, any thread id
        assert (await http.get(f"/api/threads/{tid}/uploads/limits")).status_code == 200


async def test_features_suggestions_channels(two_users: App) -> None:
    client = two_users.sdk("alice")
    tid = (await client.threads.create())["thread_id"]
    async with two_users.http("alice") as http:
        features = (await http.get("/api/features")).json()
        assert features["agents_api"] == {"enabled": True}  # /api/agents works
        for key in ("browser_control", "mcp_tasks"):
            assert features[key] == {"enabled": False}
        assert (await http.get("/api/suggestions/config")).json() == {
            "enabled": True,
            "max_suggestions": 3,
        }
        body = {
            "messages": [
                {"role": "user", "content": "tell me about otters"},
                {"role": "assistant", "content": "Otters are mustelids."},
            ],
            "n": 5,
        }
        got = (await http.post(f"/api/threads/{tid}/suggestions", json=body)).json()
        assert got == {"suggestions": ["What next?", "Why so?", "How long?"]}
        empty = await http.post(f"/api/threads/{tid}/suggestions", json={"messages": []})
        assert empty.json() == {"suggestions": []}
        bad = await http.post(
            f"/api/threads/{tid}/suggestions", json={**body, "model_name": "nope"}
        )
        assert bad.status_code == 400 and "nope" in bad.json()["detail"]
        assert (
            await http.post(f"/api/threads/{tid}/suggestions", json={"messages": 3})
        ).status_code == 422
        providers = (await http.get("/api/channels/providers")).json()["providers"]
        assert {p["provider"] for p in providers} == {
            "telegram",
            "slack",
            "feishu",
            "discord",
            "dingtalk",
            "wecom",
        }
        assert not any(p["enabled"] or p["connectable"] for p in providers)  # none configured
    async with two_users.http("bob") as http:
        r = await http.post(f"/api/threads/{tid}/suggestions", json=body)
        assert r.status_code == 404
    async with two_users.http(None) as http:
        assert (await http.get("/api/features")).status_code == 401


async def test_run_feedback(two_users: App) -> None:
    tid, (first, _) = await _thread_with_two_runs(two_users)
    url = f"/api/threads/{tid}/runs/{first}/feedback"
    async with two_users.http("alice") as http:
        assert (await http.get(url)).json() == []
        up = await http.put(url, json={"rating": 1, "comment": " great "})
        assert up.status_code == 200, up.text
        saved = up.json()
        assert {k: saved[k] for k in ("run_id", "thread_id", "user_id", "rating", "comment")} == {
            "run_id": first,
            "thread_id": tid,
            "user_id": "alice",
            "rating": 1,
            "comment": "great",
        }
        assert saved["feedback_id"] and saved["created_at"]
        down = (await http.put(url, json={"rating": -1})).json()
        assert down["feedback_id"] == saved["feedback_id"] and down["rating"] == -1
        assert down["comment"] is None
        listed = (await http.get(f"/api/threads/{tid}/feedback")).json()["feedback"]
        assert [(f["run_id"], f["rating"]) for f in listed] == [(first, -1)]
        for bad in ({"rating": 0}, {"rating": 2}, {"rating": "up"}, {"rating": 1, "x": 1}):
            r = await http.put(url, json=bad)
            assert r.status_code == 422, bad
        assert (await http.get(url)).json()[0]["rating"] == -1  # nothing written by the bad ones
        missing = f"/api/threads/{tid}/runs/{'0' * 8}-0000-4000-8000-{'0' * 12}/feedback"
        assert (await http.put(missing, json={"rating": 1})).status_code == 404
    async with two_users.http("bob") as http:
        assert (await http.put(url, json={"rating": 1})).status_code == 404
        assert (await http.delete(url)).status_code == 404
    async with two_users.http("alice") as http:
        assert (await http.delete(url)).status_code == 204
        assert (await http.delete(url)).status_code == 404
        assert (await http.get(url)).json() == []
        await http.put(url, json={"rating": 1})
        assert (await http.delete(f"/api/langgraph/threads/{tid}")).status_code == 204

    def unit(conn: Connection):
        from sqlalchemy import func, select

        from pronghorn.persistence.tables import run_feedback

        left = (conn.execute(select(func.count()).select_from(run_feedback))).scalar()
        return left

    left = await two_users.runtime.db.read(unit)
    assert left == 0  # feedback goes with its thread
