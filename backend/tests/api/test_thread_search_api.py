"""GET /api/threads/search against a live gateway: a renamed thread and one whose messages
hold the words are found, paging by next_offset, bad queries are 422."""

from __future__ import annotations

import uuid

from support.inproc import InProcessServer


def test_search_route_finds_titles_and_messages(server: InProcessServer) -> None:
    word = f"zq{uuid.uuid4().hex[:8]}"  # unique to this test on the shared server
    with server.http(base_url=server.url, timeout=60) as http:
        titled = http.post("/api/langgraph/threads", json={"metadata": {"title": f"{word} A"}})
        said = http.post("/api/langgraph/threads", json={"metadata": {"graph_id": "echo"}}).json()[
            "thread_id"
        ]
        r = http.post(
            f"/api/langgraph/threads/{said}/state",
            json={"values": {"messages": [{"type": "human", "content": f"about {word}"}]}},
        )
        assert r.status_code == 200, r.text
        r = http.get("/api/threads/search", params={"q": word.upper(), "limit": 1})
        assert r.status_code == 200, r.text
        first = r.json()
        assert first["next_offset"] == 1 and len(first["threads"]) == 1
        assert first["threads"][0]["thread_id"] == titled.json()["thread_id"]  # title first
        rest = http.get("/api/threads/search", params={"q": word, "limit": 1, "offset": 1})
        assert [t["thread_id"] for t in rest.json()["threads"]] == [said]
        assert rest.json()["next_offset"] is None
        assert http.get("/api/threads/search", params={"q": "?!"}).status_code == 422
        assert http.get("/api/threads/search", params={"q": ""}).status_code == 422
        assert http.get("/api/threads/search", params={"q": "x", "limit": 0}).status_code == 422
