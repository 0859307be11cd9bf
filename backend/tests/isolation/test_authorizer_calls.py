"""The runtime's authorizer is asked at each access point, and what it answers is applied:
a refusal is a 403, an edit of `value` is kept, and a metadata filter narrows search and
count (in SQL) and single-resource access (a filtered-out resource is a 404)."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import httpx
import pytest

from isolation.appkit import App
from pronghorn.auth.authenticator import AuthError
from pronghorn.auth.authorizer import Action, MetadataFilter, Resource
from pronghorn.auth.principal import Principal

HUMAN: dict[str, Any] = {"messages": [{"role": "human", "content": "hi"}]}


class TeamPolicy:
    """Stamps `team` on what is created; users see only their team's threads; bob may
    not create assistants; records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Resource, Action]] = []

    async def authorize(
        self,
        principal: Principal,
        resource: Resource,
        action: Action,
        value: MutableMapping[str, object],
    ) -> MetadataFilter | None:
        self.calls.append((principal.identity, resource, action))
        team = "blue" if principal.username == "bob" else "red"
        if resource == "assistants" and action == "create" and principal.username == "bob":
            raise AuthError("bob may not create assistants", 403)
        if action == "create" and isinstance(value.get("metadata"), dict):
            value["metadata"] = {**value["metadata"], "team": team}  # type: ignore[dict-item]
        if resource == "threads" and action != "create":
            return {"team": {"$eq": team}}
        return None


async def test_policy_is_applied(app: App) -> None:
    policy = TeamPolicy()
    app.set_authorizer(policy)
    alice = app.sdk("alice")
    stamped = await alice.threads.create(metadata={"x": 1})
    assert stamped["metadata"] == {"x": 1, "team": "red"}
    tid = stamped["thread_id"]
    await alice.runs.wait(tid, "echo", input=HUMAN)

    # A thread of alice's whose metadata leaves the filter: gone from every view of hers.
    app.set_authorizer(_Permissive())
    other = await alice.threads.create(metadata={"team": "green"})
    app.set_authorizer(policy)
    oid = other["thread_id"]
    assert [t["thread_id"] for t in await alice.threads.search()] == [tid]
    assert await alice.threads.count() == 1
    for call in (
        lambda: alice.threads.get(oid),
        lambda: alice.threads.get_state(oid),
        lambda: alice.runs.create(oid, "echo", input=HUMAN),
        lambda: alice.runs.list(oid),
    ):
        with pytest.raises(httpx.HTTPStatusError) as err:
            await call()
        assert err.value.response.status_code == 404
    assert (await alice.threads.get(tid))["thread_id"] == tid
    for action in ("create", "create_run", "read", "search"):
        assert ("alice", "threads", action) in policy.calls

    bob = app.sdk("bob")
    with pytest.raises(httpx.HTTPStatusError) as err:
        await bob.assistants.create("echo", name="nope")
    assert err.value.response.status_code == 403
    assert err.value.response.json() == {"detail": "bob may not create assistants"}
    made = await alice.assistants.create("echo", name="ok")
    assert made["metadata"] is not None and made["metadata"]["team"] == "red"
    for resource, action in (
        ("assistants", "search"),
        ("crons", "search"),
        ("store", "put"),
        ("store", "list_namespaces"),
    ):
        await {
            ("assistants", "search"): lambda: alice.assistants.search(),
            ("crons", "search"): lambda: alice.crons.search(),
            ("store", "put"): lambda: alice.store.put_item(["a"], "k", {"v": 1}),
            ("store", "list_namespaces"): lambda: alice.store.list_namespaces(),
        }[(resource, action)]()
        assert ("alice", resource, action) in policy.calls


class _Permissive:
    async def authorize(
        self,
        principal: Principal,
        resource: Resource,
        action: Action,
        value: MutableMapping[str, object],
    ) -> MetadataFilter | None:
        return None
