"""`auth.mode: custom`: a `langgraph_sdk.Auth` object's `@auth.authenticate` handler turns
each request into a principal, as the LangGraph server runs it.

The handler names the request parts it wants and gets them by name: `request` (a Starlette
`Request`), `headers` (`dict[bytes, bytes]`, lower-case names), `authorization` (the header,
or None), `path`, `method`, `query_params` (Starlette `QueryParams`), `path_params` (empty:
authentication runs before routing), `scopes` (empty), `user` (None) and `scope` (the ASGI
scope). `body` is refused at startup: the body is not read before authentication. A sync
handler runs in a worker thread.

It returns the identity as a string, a dict (`identity` required; `display_name`,
`is_authenticated`, `permissions` and any further fields), an object with an `identity`
attribute (a `BaseUser`), or a `(permissions, user)` pair. Raising
`Auth.exceptions.HTTPException` (or Starlette's) answers its status, detail and headers.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import cast

from langgraph_sdk.auth.exceptions import HTTPException as AuthHTTPException
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.types import Scope

from pronghorn.auth.authenticator import AuthError, Credentials
from pronghorn.auth.custom.user import CORE_FIELDS
from pronghorn.auth.principal import Principal

log = logging.getLogger("pronghorn.auth")

AuthenticateHandler = Callable[..., object]

SUPPORTED_PARAMETERS = frozenset(
    {
        "request",
        "headers",
        "authorization",
        "path",
        "method",
        "query_params",
        "path_params",
        "scopes",
        "user",
        "scope",
    }
)

# The principal of every request when the Auth object has no @auth.authenticate handler.
ANONYMOUS = Principal(identity="anonymous", display_name="Anonymous", kind="anonymous")


class CustomAuthConfigError(Exception):
    """The `auth.custom` object cannot be used (raised at startup)."""


def handler_parameters(handler: AuthenticateHandler) -> frozenset[str]:
    """The request parts `handler` asks for; raises `CustomAuthConfigError` for a required
    parameter we cannot supply."""
    name = getattr(handler, "__name__", repr(handler))
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError) as exc:
        raise CustomAuthConfigError(f"authenticate handler {name}: {exc}") from None
    wanted: set[str] = set()
    unsupported: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.name in SUPPORTED_PARAMETERS and param.kind != param.POSITIONAL_ONLY:
            wanted.add(param.name)
        elif param.default is param.empty:
            unsupported.append(param.name)
    if unsupported:
        hint = " (the request body is not read before authentication)" * ("body" in unsupported)
        raise CustomAuthConfigError(
            f"authenticate handler {name} has unsupported required parameter(s) "
            f"{', '.join(unsupported)}{hint}; supported: {', '.join(sorted(SUPPORTED_PARAMETERS))}"
        )
    return frozenset(wanted)


def scope_of(credentials: Credentials) -> Scope:
    """The request's ASGI scope (a minimal one when the credentials carry none)."""
    if credentials.scope is not None:
        return credentials.scope
    client = (credentials.client_ip, 0) if credentials.client_ip else None
    return {
        "type": "http",
        "method": credentials.method,
        "path": credentials.path,
        "raw_path": credentials.path.encode("latin-1"),
        "root_path": "",
        "query_string": credentials.query_string.encode("latin-1"),
        "headers": [
            (key.encode("latin-1"), value.encode("latin-1"))
            for key, value in credentials.headers.items()
        ],
        "client": client,
    }


def _raw_headers(scope: Scope) -> dict[bytes, bytes]:
    pairs = cast("Iterable[tuple[bytes, bytes]]", scope.get("headers", ()))
    return {bytes(key).lower(): bytes(value) for key, value in pairs}


def handler_arguments(wanted: frozenset[str], credentials: Credentials) -> dict[str, object]:
    scope = scope_of(credentials)
    args: dict[str, object] = {}
    if "request" in wanted:
        args["request"] = Request(scope)
    if "scope" in wanted:
        args["scope"] = scope
    if "headers" in wanted:
        args["headers"] = _raw_headers(scope)
    if "authorization" in wanted:
        raw = _raw_headers(scope).get(b"authorization")
        args["authorization"] = raw.decode("utf-8", errors="replace") if raw is not None else None
    if "path" in wanted:
        args["path"] = credentials.path
    if "method" in wanted:
        args["method"] = credentials.method
    if "query_params" in wanted:
        args["query_params"] = QueryParams(credentials.query_string)
    if "path_params" in wanted:
        args["path_params"] = dict(cast("Mapping[str, str]", scope.get("path_params", {})))
    if "scopes" in wanted:
        args["scopes"] = []
    if "user" in wanted:
        args["user"] = None
    return args


def _field(user: object, name: str) -> object:
    if isinstance(user, Mapping):
        return cast("Mapping[str, object]", user).get(name)
    return getattr(user, name, None)


def _extra_fields(user: object) -> dict[str, object]:
    """The fields beyond the core four: a dict's other keys, a `BaseUser`'s other items
    (it is iterable and indexable), or a pydantic model's dump."""
    fields: dict[str, object] = {}
    if isinstance(user, Mapping):
        fields = dict(cast("Mapping[str, object]", user))
    elif hasattr(user, "__iter__") and hasattr(user, "__getitem__"):
        indexable = cast("Mapping[str, object]", user)
        fields = {str(key): indexable[key] for key in indexable}
    elif callable(dump := getattr(user, "model_dump", None)):
        dumped = cast("Callable[[], object]", dump)()
        if isinstance(dumped, Mapping):
            fields = dict(cast("Mapping[str, object]", dumped))
    return {key: value for key, value in fields.items() if key not in CORE_FIELDS}


def _permissions(raw: object) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        return (raw,)
    if isinstance(raw, Iterable):
        return tuple(str(p) for p in cast("Iterable[object]", raw))
    raise AuthError(f"custom auth: permissions must be a list of strings, got {raw!r}", 500)


def principal_of(result: object) -> Principal:
    """The principal for what an authenticate handler returned (LangGraph's shapes)."""
    permissions: object = None
    user = result
    if isinstance(result, tuple):
        pair = cast("tuple[object, ...]", result)
        if len(pair) != 2:
            raise AuthError(
                "custom auth: the authenticate handler returned a tuple that is not "
                "(permissions, user)",
                500,
            )
        permissions, user = pair
    if isinstance(user, str):
        identity: object = user
        extra: dict[str, object] = {}
    else:
        identity = _field(user, "identity")
        if identity is None:
            raise AuthError(
                "custom auth: the authenticate handler must return a string identity, a dict "
                f"with 'identity' or a user object with an identity; got {type(user).__name__}",
                500,
            )
        extra = _extra_fields(user)
        if permissions is None:
            permissions = _field(user, "permissions")
    if not isinstance(identity, str) or not identity:
        raise AuthError(
            f"custom auth: the identity must be a non-empty string, got {identity!r}", 500
        )
    display_name = identity if isinstance(user, str) else _field(user, "display_name")
    authenticated = True if isinstance(user, str) else _field(user, "is_authenticated")
    return Principal(
        identity=identity,
        display_name=display_name if isinstance(display_name, str) else identity,
        kind="anonymous" if authenticated is False else "custom",
        permissions=_permissions(permissions),
        extra=extra,
    )


def http_error(exc: AuthHTTPException | StarletteHTTPException) -> AuthError:
    headers = dict(exc.headers or {})
    return AuthError(str(exc.detail), exc.status_code, headers=headers)


class CustomAuthenticator:
    """Runs the `@auth.authenticate` handler for each request (none: everyone is
    `ANONYMOUS`)."""

    def __init__(self, handler: AuthenticateHandler | None) -> None:
        self._handler = handler
        self._wanted = handler_parameters(handler) if handler is not None else frozenset[str]()

    async def authenticate(self, credentials: Credentials) -> Principal:
        handler = self._handler
        if handler is None:
            return ANONYMOUS
        kwargs = handler_arguments(self._wanted, credentials)
        try:
            if inspect.iscoroutinefunction(handler):
                result = await cast("Callable[..., Awaitable[object]]", handler)(**kwargs)
            else:
                result = await asyncio.to_thread(handler, **kwargs)
                if inspect.isawaitable(result):  # a callable object with an async __call__
                    result = await result
        except (AuthHTTPException, StarletteHTTPException) as exc:
            raise http_error(exc) from None
        except AuthError:
            raise
        except Exception as exc:
            log.exception("custom authenticate handler failed")
            raise AuthError(
                f"custom auth: the authenticate handler failed ({type(exc).__name__})", 500
            ) from None
        return principal_of(result)
