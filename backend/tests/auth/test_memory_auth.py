"""Memory behind real local auth: two users made through the API, each logged in with a
cookie session; each sees and edits only their own memory, and anonymous calls get 401."""

from __future__ import annotations

from auth.authkit import AuthedServer


def test_memory_is_per_user_and_needs_a_login(authed: AuthedServer) -> None:
    admin = authed.login()
    for name in ("mem-alice", "mem-bob"):
        authed.new_user(admin, name, f"{name}-password-123")
    alice = authed.login("mem-alice", "mem-alice-password-123")
    bob = authed.login("mem-bob", "mem-bob-password-123")
    try:
        r = alice.post("/api/memory/facts", json={"content": "Alice plays the cello"})
        assert r.status_code == 201, r.text
        fact_id = r.json()["facts"][0]["id"]  # the whole memory comes back
        assert [f["content"] for f in alice.get("/api/memory").json()["facts"]] == [
            "Alice plays the cello"
        ]
        assert bob.get("/api/memory").json()["facts"] == []
        assert bob.patch(f"/api/memory/facts/{fact_id}", json={"content": "x"}).status_code == 404
        assert bob.delete(f"/api/memory/facts/{fact_id}").status_code == 404
        assert bob.post("/api/memory/import", json={"facts": []}).status_code == 200
        assert admin.get("/api/memory").json()["facts"] == []
        # a write without the CSRF token of the session is refused
        assert alice.http.post("/api/memory/facts", json={"content": "y"}).status_code == 403
        with authed.client() as anonymous:
            assert anonymous.get("/api/memory").status_code == 401
            assert anonymous.get("/api/memory/status").status_code == 401
        assert len(alice.get("/api/memory").json()["facts"]) == 1
    finally:
        for who in (admin, alice, bob):
            who.http.close()
