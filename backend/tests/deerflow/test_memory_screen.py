"""DeerFlow's memory screen (core/memory/api.ts): every call it makes answers the whole
memory in its ``UserMemory`` shape, and a DeerFlow export imports."""

from __future__ import annotations

from deerflow.conftest import StartApp
from deerflow.shapes import USER_MEMORY, assert_shape

DEERFLOW_EXPORT = {
    "version": "1.0",
    "lastUpdated": "2026-11-02T10:00:00Z",
    "user": {
        "workContext": {"summary": "Builds gateways", "updatedAt": "2026-11-01T10:00:00Z"},
        "personalContext": {"summary": "", "updatedAt": ""},
        "topOfMind": {"summary": "Shipping v2", "updatedAt": "2026-11-02T10:00:00Z"},
    },
    "history": {
        "recentMonths": {"summary": "Moved to Rust", "updatedAt": "2026-10-01T00:00:00Z"},
        "earlierContext": {"summary": "", "updatedAt": ""},
        "longTermBackground": {"summary": "Ten years of Python", "updatedAt": ""},
    },
    "facts": [
        {
            "id": "fact_a",
            "content": "Prefers short answers",
            "category": "preference",
            "confidence": 0.9,
            "createdAt": "2026-10-05T08:00:00Z",
            "source": "manual",
        }
    ],
}


async def test_every_call_answers_user_memory(make_app: StartApp) -> None:
    app = await make_app(memory={"enabled": True})
    async with app.http("alice") as http:
        empty = await http.get("/api/memory")
        assert empty.status_code == 200, empty.text
        assert_shape(empty.json(), USER_MEMORY)
        assert empty.json()["facts"] == [] and empty.json()["version"] == "1.0"

        added = await http.post(
            "/api/memory/facts",
            json={"content": "Lives in Lisbon", "category": "context", "confidence": 0.8},
        )
        assert added.is_success, added.text
        assert_shape(added.json(), USER_MEMORY)
        (fact,) = added.json()["facts"]
        assert fact["content"] == "Lives in Lisbon" and fact["source"] == "manual"

        patched = await http.patch(f"/api/memory/facts/{fact['id']}", json={"confidence": 0.5})
        assert patched.status_code == 200, patched.text
        assert_shape(patched.json(), USER_MEMORY)
        assert patched.json()["facts"][0]["confidence"] == 0.5

        exported = await http.get("/api/memory/export")
        assert_shape(exported.json(), USER_MEMORY)
        assert "attachment" in exported.headers["content-disposition"]

        deleted = await http.delete(f"/api/memory/facts/{fact['id']}")
        assert deleted.status_code == 200, deleted.text
        assert_shape(deleted.json(), USER_MEMORY)
        assert deleted.json()["facts"] == []

        imported = await http.post("/api/memory/import", json=DEERFLOW_EXPORT)
        assert imported.status_code == 200, imported.text
        doc = imported.json()
        assert_shape(doc, USER_MEMORY)
        assert doc["user"]["workContext"]["summary"] == "Builds gateways"
        assert doc["user"]["topOfMind"]["summary"] == "Shipping v2"
        assert doc["history"]["recentMonths"]["summary"] == "Moved to Rust"
        assert doc["history"]["longTermBackground"]["summary"] == "Ten years of Python"
        assert [(f["id"], f["content"], f["source"]) for f in doc["facts"]] == [
            ("fact_a", "Prefers short answers", "manual")
        ]
        assert (await http.get("/api/memory")).json()["history"] == doc["history"]

        cleared = await http.delete("/api/memory")
        assert cleared.status_code == 200, cleared.text
        assert_shape(cleared.json(), USER_MEMORY)
        assert cleared.json()["facts"] == []
        assert cleared.json()["user"]["workContext"]["summary"] == ""

        bad = await http.post("/api/memory/import", json={**DEERFLOW_EXPORT, "user": 3})
        assert bad.status_code == 422
    async with app.http("bob") as http:  # alice's memory is hers
        assert (await http.get("/api/memory")).json()["facts"] == []
