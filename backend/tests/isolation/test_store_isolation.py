"""Store namespaces are per user, hidden from the client: two users writing the same
namespace and key each see only their own, with namespaces exactly as they wrote them."""

from __future__ import annotations

from isolation.appkit import App


async def test_same_namespace_two_users_each_see_their_own(app: App) -> None:
    alice, bob = app.sdk("alice"), app.sdk("bob")
    await alice.store.put_item(["notes", "work"], "k", {"by": "alice"})
    await alice.store.put_item(["notes", "home", "deep"], "k2", {"by": "alice"})
    await bob.store.put_item(["notes", "work"], "k", {"by": "bob"})

    got = await alice.store.get_item(["notes", "work"], "k")
    assert got is not None and got["value"] == {"by": "alice"}
    assert got["namespace"] == ["notes", "work"]
    got = await bob.store.get_item(["notes", "work"], "k")
    assert got is not None and got["value"] == {"by": "bob"}
    assert await bob.store.get_item(["notes", "home", "deep"], "k2") is None

    found = await bob.store.search_items(["notes"])
    assert [(i["namespace"], i["value"]) for i in found["items"]] == [
        (["notes", "work"], {"by": "bob"})
    ]
    found = await alice.store.search_items([])
    assert sorted(tuple(i["namespace"]) for i in found["items"]) == [
        ("notes", "home", "deep"),
        ("notes", "work"),
    ]

    listed = await alice.store.list_namespaces()
    assert sorted(map(tuple, listed["namespaces"])) == [
        ("notes", "home", "deep"),
        ("notes", "work"),
    ]
    assert (await bob.store.list_namespaces())["namespaces"] == [["notes", "work"]]
    assert (await alice.store.list_namespaces(prefix=["notes", "home"]))["namespaces"] == [
        ["notes", "home", "deep"]
    ]
    assert sorted(map(tuple, (await alice.store.list_namespaces(max_depth=2))["namespaces"])) == [
        ("notes", "home"),
        ("notes", "work"),
    ]
    assert (await alice.store.list_namespaces(suffix=["deep"]))["namespaces"] == [
        ["notes", "home", "deep"]
    ]
    assert (await bob.store.list_namespaces(prefix=["notes", "home"]))["namespaces"] == []

    # bob deleting "his" copy of the same namespace and key leaves alice's alone.
    await bob.store.delete_item(["notes", "work"], "k")
    assert await bob.store.get_item(["notes", "work"], "k") is None
    assert (await alice.store.get_item(["notes", "work"], "k") or {})["value"] == {"by": "alice"}


async def test_admin_asking_for_all_users_works_on_the_raw_store(app: App) -> None:
    await app.sdk("alice").store.put_item(["notes"], "k", {"by": "alice"})
    admin = app.sdk("admin")
    assert (await admin.store.list_namespaces())["namespaces"] == []
    everyone = app.sdk("admin", **{"X-Pronghorn-All-Users": "true"})
    listed = (await everyone.store.list_namespaces())["namespaces"]
    assert listed == [["__user__", "alice", "notes"]]
    # The graph-facing store is the raw one: the item is where the admin view says.
    item = await app.runtime.store.aget(("__user__", "alice", "notes"), "k")
    assert item is not None and item.value == {"by": "alice"}
