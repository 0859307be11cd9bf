"""Deleting a user (DELETE /api/auth/users/{id}, admins only) takes everything of theirs
with it: sessions, API keys, threads and their files, crons, memory and store items; the
last admin and oneself are refused; the audit log keeps the deletion."""

from __future__ import annotations

from typing import Any

from auth.authkit import AuthedServer, Browser

ALL = {"X-Pronghorn-All-Users": "true"}


def _raw_items(admin: Browser, prefix: list[str]) -> list[dict[str, Any]]:
    resp = admin.post(
        "/api/langgraph/store/items/search",
        json={"namespace_prefix": prefix, "limit": 100},
        headers=ALL,
    )
    assert resp.status_code == 200, resp.text
    return list(resp.json()["items"])


def test_deleting_a_user_takes_their_memory_threads_store_and_keys(authed: AuthedServer) -> None:
    admin = authed.login()
    carol_id = authed.new_user(admin, "del-carol", "del-carol-password-1")
    carol = authed.login("del-carol", "del-carol-password-1")
    key = authed.new_key(carol, "laptop")["key"]
    assert carol.post("/api/memory/facts", json={"content": "Carol keeps bees"}).status_code == 201
    put = carol.http.put(
        "/api/langgraph/store/items",
        json={"namespace": ["notes"], "key": "k1", "value": {"text": "private"}},
        headers={"X-CSRF-Token": carol.csrf},
    )
    assert put.status_code == 204, put.text
    thread = carol.post("/api/langgraph/threads", json={}).json()["thread_id"]
    upload = carol.post(
        f"/api/threads/{thread}/uploads", files={"files": ("a.txt", b"hello", "text/plain")}
    )
    assert upload.status_code in (200, 201), upload.text
    assert (authed.data_dir / "users" / carol_id).is_dir()
    assert _raw_items(admin, ["__memory__", carol_id]), "memory is in the store before"
    assert _raw_items(admin, ["__user__", carol_id])

    gone = admin.delete(f"/api/auth/users/{carol_id}")
    assert gone.status_code == 200, gone.text
    body = gone.json()
    assert body["user"]["username"] == "del-carol"
    assert body["removed"]["threads"] == 1
    assert body["removed"]["memory_documents"] == 1
    assert body["removed"]["store_items"] == 1

    # Nothing of hers is left: memory, store items, the thread and its folder.
    assert _raw_items(admin, ["__memory__", carol_id]) == []
    assert _raw_items(admin, ["__user__", carol_id]) == []
    assert admin.get(f"/api/langgraph/threads/{thread}", headers=ALL).status_code == 404
    assert not (authed.data_dir / "users" / carol_id).exists()
    # Her session and key stop working; she cannot log in; she is not listed.
    assert carol.get("/api/auth/me").status_code == 401
    with authed.client() as http:
        assert http.get("/api/auth/me", headers={"x-api-key": key}).status_code == 401
        login = http.post(
            "/api/auth/login", json={"username": "del-carol", "password": "del-carol-password-1"}
        )
        assert login.status_code == 401
    assert all(u["id"] != carol_id for u in admin.get("/api/auth/users").json())
    audit = admin.get("/api/auth/audit", params={"action": "user.delete"}).json()
    entries = audit["items"] if isinstance(audit, dict) else audit
    assert any(e.get("target") == carol_id for e in entries)
    # A second delete is a 404.
    assert admin.delete(f"/api/auth/users/{carol_id}").status_code == 404


def test_deleting_oneself_or_as_a_user_is_refused(authed: AuthedServer) -> None:
    admin = authed.login()
    dave_id = authed.new_user(admin, "del-dave", "del-dave-password-1")
    erin_id = authed.new_user(admin, "del-erin", "del-erin-password-1")
    dave = authed.login("del-dave", "del-dave-password-1")
    assert dave.delete(f"/api/auth/users/{erin_id}").status_code == 403
    refused = admin.delete(f"/api/auth/users/{admin.user['id']}")
    assert refused.status_code == 409 and "own account" in refused.text
    # erin is untouched by dave's refused attempt
    assert any(u["id"] == erin_id for u in admin.get("/api/auth/users").json())
    assert dave.get("/api/auth/me").status_code == 200
    assert admin.delete(f"/api/auth/users/{dave_id}").status_code == 200
