"""`@auth.authenticate` handlers run as the LangGraph server runs them: parameters injected
by name, every identity shape it accepts, its HTTPException answered as raised."""

# The handlers here take the shapes the LangGraph server accepts beyond what the SDK's Auth
# declares (sync functions, values typed loosely, results of any type, a user read as a
# mapping), on purpose: the argument checks against those declarations are off in this file.
# pyright: reportArgumentType=false

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence

import pytest
from langgraph_sdk import Auth
from langgraph_sdk.auth.types import MinimalUserDict, StudioUser
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request

from pronghorn.auth.authenticator import AuthError, Credentials
from pronghorn.auth.custom.authenticate import ANONYMOUS, CustomAuthConfigError
from pronghorn.auth.custom.handlers import custom_auth
from pronghorn.auth.principal import Principal


def creds(
    headers: dict[str, str] | None = None, path: str = "/api/langgraph/threads", query: str = ""
) -> Credentials:
    return Credentials(
        method="POST",
        path=path,
        headers={"authorization": "Bearer tok-1", "x-org": "acme"} if headers is None else headers,
        client_ip="127.0.0.1",
        query_string=query,
    )


async def authenticate(auth: Auth, credentials: Credentials | None = None) -> Principal:
    return await custom_auth(auth, "test").authenticator.authenticate(credentials or creds())


async def test_every_supported_parameter_is_injected_by_name() -> None:
    auth = Auth()
    seen: dict[str, object] = {}

    @auth.authenticate
    async def who(
        request: Request,
        headers: dict[bytes, bytes],
        authorization: str | None,
        path: str,
        method: str,
        query_params: QueryParams,
        path_params: dict[str, str],
        scopes: list[str],
        user: object,
        scope: dict[str, object],
    ) -> str:
        seen.update(
            request_path=request.url.path,
            request_header=request.headers["x-org"],
            headers=headers,
            authorization=authorization,
            path=path,
            method=method,
            query=query_params.getlist("k"),
            path_params=path_params,
            scopes=scopes,
            user=user,
            scope_type=scope["type"],
        )
        return "alice"

    principal = await authenticate(auth, creds(query="k=1&k=2&other=x"))
    assert principal.identity == "alice"
    assert seen == {
        "request_path": "/api/langgraph/threads",
        "request_header": "acme",
        "headers": {b"authorization": b"Bearer tok-1", b"x-org": b"acme"},
        "authorization": "Bearer tok-1",
        "path": "/api/langgraph/threads",
        "method": "POST",
        "query": ["1", "2"],
        "path_params": {},
        "scopes": [],
        "user": None,
        "scope_type": "http",
    }


async def test_only_the_named_parameters_are_passed_and_missing_authorization_is_none() -> None:
    auth = Auth()

    @auth.authenticate
    async def who(authorization: str | None, optional: str = "default") -> str:
        assert optional == "default"
        return f"got {authorization}"

    assert (await authenticate(auth, creds(headers={}))).identity == "got None"


async def test_the_real_asgi_scope_is_handed_on_when_present() -> None:
    auth = Auth()

    @auth.authenticate
    async def who(scope: dict[str, object], request: Request) -> str:
        scope["seen"] = True
        return str(request.app)

    scope: dict[str, object] = {"type": "http", "method": "GET", "path": "/x", "headers": []}
    scope["app"] = "the-app"
    credentials = Credentials(method="GET", path="/x", headers={}, scope=scope)
    assert (await authenticate(auth, credentials)).identity == "the-app"
    assert scope["seen"] is True


async def test_a_string_identity() -> None:
    auth = Auth()

    @auth.authenticate
    async def who() -> str:
        return "user-7"

    principal = await authenticate(auth)
    assert (principal.identity, principal.display_name, principal.kind) == (
        "user-7",
        "user-7",
        "custom",
    )
    assert principal.permissions == ()
    assert principal.auth_user()["is_authenticated"] is True


async def test_a_dict_identity_keeps_its_extra_fields() -> None:
    auth = Auth()

    @auth.authenticate
    async def who(authorization: str | None) -> MinimalUserDict:
        return {  # type: ignore[typeddict-unknown-key]
            "identity": "u1",
            "display_name": "User One",
            "permissions": ["threads:write", "read"],
            "org": "acme",
            "role": "owner",
        }

    principal = await authenticate(auth)
    assert principal.identity == "u1"
    assert principal.display_name == "User One"
    assert principal.permissions == ("threads:write", "read")
    assert principal.extra == {"org": "acme", "role": "owner"}
    graph_user = principal.auth_user()
    assert graph_user["org"] == "acme"
    assert graph_user["role"] == "owner"  # the handler's own field, not Pronghorn's role
    assert graph_user["permissions"] == ["threads:write", "read"]


class Member:
    """A `BaseUser`: attributes plus item access and iteration over its fields."""

    def __init__(self, identity: str, team: str) -> None:
        self._data = {"identity": identity, "team": team}

    @property
    def identity(self) -> str:
        return self._data["identity"]

    @property
    def display_name(self) -> str:
        return f"Member {self.identity}"

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def permissions(self) -> Sequence[str]:
        return ["admin:read"]

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)


async def test_a_base_user_object() -> None:
    auth = Auth()

    @auth.authenticate
    async def who() -> Member:
        return Member("m1", "blue")

    principal = await authenticate(auth)
    assert principal.identity == "m1"
    assert principal.display_name == "Member m1"
    assert principal.permissions == ("admin:read",)
    assert principal.extra == {"team": "blue"}


async def test_a_minimal_user_and_a_permissions_user_pair() -> None:
    auth = Auth()

    @auth.authenticate
    async def who() -> tuple[list[str], StudioUser]:
        return (["p1", "p2"], StudioUser("studio", is_authenticated=True))

    principal = await authenticate(auth)
    assert (principal.identity, principal.display_name) == ("studio", "studio")
    assert principal.permissions == ("p1", "p2")


async def test_is_authenticated_false_is_an_anonymous_principal() -> None:
    auth = Auth()

    @auth.authenticate
    async def who() -> dict[str, object]:
        return {"identity": "guest", "is_authenticated": False}

    principal = await authenticate(auth)
    assert principal.kind == "anonymous"
    assert principal.auth_user()["is_authenticated"] is False


async def test_no_authenticate_handler_makes_every_request_anonymous() -> None:
    auth = Auth()

    @auth.on
    async def allow(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
        return None

    assert await authenticate(auth, creds(headers={})) == ANONYMOUS
    assert ANONYMOUS.auth_user()["is_authenticated"] is False


@pytest.mark.parametrize(
    ("error", "status", "detail", "headers"),
    [
        (Auth.exceptions.HTTPException(status_code=401, detail="bad token"), 401, "bad token", {}),
        (Auth.exceptions.HTTPException(status_code=403), 403, "Forbidden", {}),
        (
            Auth.exceptions.HTTPException(429, "slow down", headers={"Retry-After": "7"}),
            429,
            "slow down",
            {"Retry-After": "7"},
        ),
        (StarletteHTTPException(status_code=418, detail="teapot"), 418, "teapot", {}),
    ],
)
async def test_http_exceptions_answer_their_status_detail_and_headers(
    error: Exception, status: int, detail: str, headers: dict[str, str]
) -> None:
    auth = Auth()

    @auth.authenticate
    async def who(authorization: str | None) -> str:
        raise error

    with pytest.raises(AuthError) as caught:
        await authenticate(auth)
    assert (caught.value.status, caught.value.detail, dict(caught.value.headers)) == (
        status,
        detail,
        headers,
    )


async def test_a_crashing_handler_is_a_500_that_names_no_secret() -> None:
    auth = Auth()

    @auth.authenticate
    async def who(authorization: str | None) -> str:
        raise KeyError(authorization)

    with pytest.raises(AuthError) as caught:
        await authenticate(auth)
    assert caught.value.status == 500
    assert "KeyError" in caught.value.detail and "tok-1" not in caught.value.detail


@pytest.mark.parametrize("result", [None, 42, {"name": "no identity"}, ("a", "b", "c"), ""])
async def test_an_unusable_result_is_a_clear_500(result: object) -> None:
    auth = Auth()

    @auth.authenticate
    async def who() -> object:
        return result

    with pytest.raises(AuthError, match="custom auth") as caught:
        await authenticate(auth)
    assert caught.value.status == 500


async def test_a_sync_handler_runs_off_the_event_loop() -> None:
    auth = Auth()
    loop = asyncio.get_running_loop()
    started = asyncio.Event()
    release = threading.Event()
    ran_in: list[int] = []

    def who(authorization: str | None) -> str:  # sync: allowed by the LangGraph server
        ran_in.append(threading.get_ident())
        loop.call_soon_threadsafe(started.set)
        release.wait(timeout=60)
        return "sync-user"

    auth.authenticate(who)
    task = asyncio.create_task(authenticate(auth))
    # the handler is blocked, yet the loop runs this coroutine: it is not on the loop
    await asyncio.wait_for(started.wait(), timeout=60)
    release.set()
    assert (await task).identity == "sync-user"
    assert ran_in == [ran_in[0]] and ran_in[0] != threading.get_ident()


def test_a_required_parameter_it_cannot_supply_is_refused_at_startup() -> None:
    auth = Auth()

    @auth.authenticate
    async def who(body: dict[str, object]) -> str:
        return "x"

    with pytest.raises(CustomAuthConfigError, match=r"body.*not read before authentication"):
        custom_auth(auth, "./auth.py:auth")

    other = Auth()

    @other.authenticate
    async def who2(token: str) -> str:
        return token

    with pytest.raises(CustomAuthConfigError, match=r"'\./auth\.py:auth'.*token.*supported"):
        custom_auth(other, "./auth.py:auth")
