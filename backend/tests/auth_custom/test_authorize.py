"""`@auth.on` handlers applied as the LangGraph server applies them: the most specific
handler wins, its return allows, refuses or filters, and its edits of `value` stick."""

# The handlers here take the shapes the LangGraph server accepts beyond what the SDK's Auth
# declares (sync functions, values typed loosely, results of any type, a user read as a
# mapping), on purpose: the argument checks against those declarations are off in this file.
# pyright: reportArgumentType=false

from __future__ import annotations

from collections.abc import MutableMapping
from uuid import UUID

import pytest
from langgraph_sdk import Auth
from starlette.exceptions import HTTPException as StarletteHTTPException

from pronghorn.auth.authenticator import AuthError
from pronghorn.auth.authorizer import Action, MetadataFilter, Resource
from pronghorn.auth.custom.handlers import custom_auth, uncovered_actions
from pronghorn.auth.principal import Principal

ALICE = Principal(
    identity="alice",
    display_name="Alice",
    kind="custom",
    permissions=("threads:write",),
    extra={"org": "acme"},
)


async def authorize(
    auth: Auth,
    resource: Resource,
    action: Action,
    value: MutableMapping[str, object] | None = None,
    principal: Principal = ALICE,
) -> MetadataFilter | None:
    authorizer = custom_auth(auth, "test").authorizer
    return await authorizer.authorize(principal, resource, action, {} if value is None else value)


def precedence_auth(calls: list[str]) -> Auth:
    auth = Auth()

    @auth.on
    async def global_(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
        calls.append("global")

    @auth.on(actions=["read"])
    async def any_read(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
        calls.append("*.read")

    @auth.on.threads
    async def threads(ctx: Auth.types.AuthContext, value: Auth.types.on.threads.value) -> None:
        calls.append("threads.*")

    @auth.on.threads.create
    async def threads_create(
        ctx: Auth.types.AuthContext, value: Auth.types.on.threads.create.value
    ) -> None:
        calls.append("threads.create")

    return auth


@pytest.mark.parametrize(
    ("resource", "action", "winner"),
    [
        ("threads", "create", "threads.create"),  # resource + action
        ("threads", "read", "threads.*"),  # resource beats action
        ("threads", "create_run", "threads.*"),
        ("assistants", "read", "*.read"),  # action on any resource
        ("crons", "delete", "global"),  # @auth.on (or resources="*", actions="*")
        ("store", "put", "global"),
    ],
)
async def test_the_most_specific_handler_runs_alone(
    resource: Resource, action: Action, winner: str
) -> None:
    calls: list[str] = []
    assert await authorize(precedence_auth(calls), resource, action) is None
    assert calls == [winner]


async def test_the_global_handler_is_the_last_resort() -> None:
    auth = Auth()
    calls: list[str] = []

    @auth.on
    async def deny_all(ctx: Auth.types.AuthContext, value: dict[str, object]) -> bool:
        calls.append(f"{ctx.resource}.{ctx.action}")
        return False

    @auth.on.assistants.search
    async def allow(ctx: Auth.types.AuthContext, value: dict[str, object]) -> bool:
        return True

    assert await authorize(auth, "assistants", "search") is None
    with pytest.raises(AuthError) as caught:
        await authorize(auth, "threads", "create")
    assert (caught.value.status, caught.value.detail) == (403, "Forbidden")
    assert calls == ["threads.create"]


async def test_no_handler_at_all_allows_everything() -> None:
    auth = Auth()

    @auth.authenticate
    async def who() -> str:
        return "x"

    assert await authorize(auth, "threads", "delete") is None


async def test_the_handler_gets_an_auth_context_and_the_value() -> None:
    auth = Auth()
    seen: dict[str, object] = {}

    @auth.on.threads.read
    async def read(ctx: Auth.types.AuthContext, value: Auth.types.on.threads.read.value) -> None:
        seen.update(
            resource=ctx.resource,
            action=ctx.action,
            permissions=list(ctx.permissions),
            identity=ctx.user.identity,
            display_name=ctx.user.display_name,
            is_authenticated=ctx.user.is_authenticated,
            user_permissions=list(ctx.user.permissions),
            org_item=ctx.user["org"],
            org_get=ctx.user.get("org"),  # type: ignore[attr-defined]
            org_attr=ctx.user.org,  # type: ignore[attr-defined]
            has_org="org" in ctx.user,
            fields=sorted(ctx.user),
            thread_id=value["thread_id"],
        )

    thread_id = UUID("7b8ab0a1-4a0b-4a7c-9a79-1d1bf1f3d2a1")
    await authorize(auth, "threads", "read", {"thread_id": thread_id})
    assert seen == {
        "resource": "threads",
        "action": "read",
        "permissions": ["threads:write"],
        "identity": "alice",
        "display_name": "Alice",
        "is_authenticated": True,
        "user_permissions": ["threads:write"],
        "org_item": "acme",
        "org_get": "acme",
        "org_attr": "acme",
        "has_org": True,
        "fields": ["display_name", "identity", "is_authenticated", "org", "permissions"],
        "thread_id": thread_id,
    }


@pytest.mark.parametrize(
    "returned",
    [
        {"owner": "alice"},
        {"owner": {"$eq": "alice"}},
        {"tags": {"$contains": "blue"}},
        {"tags": {"$contains": ["blue", "green"]}},
        {"owner": "alice", "org": {"$eq": "acme"}},
    ],
)
async def test_a_filter_return_is_handed_back(returned: dict[str, object]) -> None:
    auth = Auth()

    @auth.on.threads
    async def only_mine(ctx: Auth.types.AuthContext, value: dict[str, object]) -> object:
        return returned

    assert await authorize(auth, "threads", "search", {"metadata": {}}) == returned


@pytest.mark.parametrize("returned", [None, True, {}])
async def test_none_true_and_an_empty_filter_allow(returned: object) -> None:
    auth = Auth()

    @auth.on
    async def allow(ctx: Auth.types.AuthContext, value: dict[str, object]) -> object:
        return returned

    assert await authorize(auth, "crons", "create") is None


async def test_value_edits_stick_so_the_service_writes_them() -> None:
    auth = Auth()

    @auth.on.threads.create
    async def stamp(ctx: Auth.types.AuthContext, value: Auth.types.on.threads.create.value) -> None:
        metadata = value.setdefault("metadata", {})
        metadata["owner"] = ctx.user.identity

    @auth.on.threads
    async def only_mine(ctx: Auth.types.AuthContext, value: dict[str, object]) -> object:
        return {"owner": ctx.user.identity}

    value: dict[str, object] = {"thread_id": "t1", "metadata": {"topic": "x"}}
    assert await authorize(auth, "threads", "create", value) is None
    assert value == {"thread_id": "t1", "metadata": {"topic": "x", "owner": "alice"}}
    bare: dict[str, object] = {}
    await authorize(auth, "threads", "create", bare)
    assert bare == {"metadata": {"owner": "alice"}}


@pytest.mark.parametrize(
    ("action", "value"),
    [
        ("put", {"namespace": ["notes"], "key": "k", "value": {"a": 1}, "index": None}),
        ("get", {"namespace": ("notes",), "key": "k"}),
        ("delete", {"namespace": ("notes",), "key": "k"}),
        ("search", {"namespace": ("notes",), "filter": None, "limit": 10, "offset": 0}),
    ],
)
async def test_store_handlers_may_rewrite_the_namespace(
    action: Action, value: dict[str, object]
) -> None:
    auth = Auth()
    seen: list[object] = []

    @auth.on.store
    async def scope_to_user(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
        seen.append(value["namespace"])  # a tuple, as LangGraph passes it
        namespace = value["namespace"]
        assert isinstance(namespace, tuple)
        value["namespace"] = [ctx.user.identity, *namespace]

    assert await authorize(auth, "store", action, value) is None
    assert seen == [("notes",)]
    assert value["namespace"] == ("alice", "notes")


async def test_store_list_namespaces_prefix() -> None:
    auth = Auth()

    @auth.on.store.list_namespaces
    async def prefix(
        ctx: Auth.types.AuthContext, value: Auth.types.on.store.list_namespaces.value
    ) -> None:
        value["namespace"] = (ctx.user.identity,)

    value: dict[str, object] = {"namespace": None, "suffix": None, "max_depth": None}
    await authorize(auth, "store", "list_namespaces", value)
    assert value["namespace"] == ("alice",)


@pytest.mark.parametrize(
    ("error", "status", "detail", "headers"),
    [
        (Auth.exceptions.HTTPException(404, "no such thread"), 404, "no such thread", {}),
        (
            Auth.exceptions.HTTPException(403, "read only", headers={"X-Why": "plan"}),
            403,
            "read only",
            {"X-Why": "plan"},
        ),
        (StarletteHTTPException(409, "busy"), 409, "busy", {}),
        (AssertionError("owners only"), 403, "owners only", {}),
        (AssertionError(), 403, "Forbidden", {}),
    ],
)
async def test_raised_errors_answer_their_status(
    error: Exception, status: int, detail: str, headers: dict[str, str]
) -> None:
    auth = Auth()

    @auth.on.threads.delete
    async def refuse(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
        raise error

    with pytest.raises(AuthError) as caught:
        await authorize(auth, "threads", "delete", {"thread_id": "t"})
    assert (caught.value.status, caught.value.detail, dict(caught.value.headers)) == (
        status,
        detail,
        headers,
    )


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("owner", "returned a str"),
        (["owner"], "returned a list"),
        ({"owner": {"$ne": "bob"}}, r"\$ne"),
        ({"owner": {}}, "only \\$eq, \\$contains"),
    ],
)
async def test_an_unusable_return_is_a_clear_500(returned: object, message: str) -> None:
    auth = Auth()

    @auth.on
    async def broken(ctx: Auth.types.AuthContext, value: dict[str, object]) -> object:
        return returned

    with pytest.raises(AuthError, match=message) as caught:
        await authorize(auth, "threads", "search")
    assert caught.value.status == 500


async def test_a_crashing_handler_is_a_500() -> None:
    auth = Auth()

    @auth.on.assistants
    async def broken(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
        raise RuntimeError("secret-detail")

    with pytest.raises(AuthError) as caught:
        await authorize(auth, "assistants", "update")
    assert caught.value.status == 500
    assert "assistants.update" in caught.value.detail
    assert "secret-detail" not in caught.value.detail


async def test_uncovered_actions_are_listed_unless_something_catches_all() -> None:
    auth = Auth()

    @auth.on.threads
    async def threads(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
        return None

    @auth.on(actions="search")
    async def searches(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
        return None

    missing = uncovered_actions(auth)
    assert "threads.create" not in missing and "assistants.search" not in missing
    assert {"assistants.create", "crons.read", "store.put"} <= set(missing)

    @auth.on
    async def deny(ctx: Auth.types.AuthContext, value: dict[str, object]) -> bool:
        return False

    assert uncovered_actions(auth) == []
