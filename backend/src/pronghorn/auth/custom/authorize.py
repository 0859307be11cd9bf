"""`auth.mode: custom`: a `langgraph_sdk.Auth` object's `@auth.on` handlers authorize each
action, as the LangGraph server applies them.

One handler runs per action, the most specific registered: `@auth.on.threads.create`
(resource and action), then `@auth.on.threads` (resource), then `@auth.on(actions=...)`
(action on any resource), then `@auth.on(resources="*", actions="*")`, then `@auth.on`.
No handler: allowed. The handler gets `ctx` (an `AuthContext`: user, permissions, resource,
action) and `value` (the action's typed dict, e.g. `ThreadsCreate`), which it may edit in
place (stamp metadata, rewrite a store namespace). It returns None or True (allowed), False
(403), or a metadata filter (allowed for matching resources only). Raising
`Auth.exceptions.HTTPException` answers its status; a failed `assert` answers 403.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import cast

from langgraph_sdk.auth.exceptions import HTTPException as AuthHTTPException
from langgraph_sdk.auth.types import AuthContext, BaseUser
from starlette.exceptions import HTTPException as StarletteHTTPException

from pronghorn.auth.authenticator import AuthError
from pronghorn.auth.authorizer import Action, MetadataFilter, Resource
from pronghorn.auth.custom.authenticate import http_error
from pronghorn.auth.custom.user import AuthUser
from pronghorn.auth.principal import Principal

log = logging.getLogger("pronghorn.auth")

OnHandler = Callable[..., object]
FILTER_OPERATORS = frozenset({"$eq", "$contains"})


def handler_keys(resource: str, action: str) -> list[tuple[str, str]]:
    """The registrations that may answer (resource, action), most specific first."""
    return [(resource, action), (resource, "*"), ("*", action), ("*", "*")]


def _filter_problem(result: Mapping[object, object]) -> str | None:
    for key, condition in result.items():
        if not isinstance(key, str):
            return f"filter key {key!r} is not a string"
        if isinstance(condition, Mapping):
            operators = set(cast("Mapping[object, object]", condition))
            if not operators or not operators <= FILTER_OPERATORS:
                return f"filter on {key!r} uses {sorted(map(str, operators))}; only $eq, $contains"
    return None


def _namespace_tuple(value: MutableMapping[str, object]) -> None:
    namespace = value.get("namespace")
    if isinstance(namespace, list | tuple):
        value["namespace"] = tuple(str(part) for part in cast("Sequence[object]", namespace))


class CustomAuthorizer:
    """Dispatches each action to the most specific `@auth.on` handler."""

    def __init__(
        self,
        handlers: Mapping[tuple[str, str], Sequence[OnHandler]],
        global_handlers: Sequence[OnHandler] = (),
    ) -> None:
        self._handlers = {key: list(found) for key, found in handlers.items() if found}
        self._global = list(global_handlers)

    def handler_for(self, resource: str, action: str) -> OnHandler | None:
        for key in handler_keys(resource, action):
            if key in self._handlers:
                return self._handlers[key][-1]
        return self._global[-1] if self._global else None

    async def authorize(
        self,
        principal: Principal,
        resource: Resource,
        action: Action,
        value: MutableMapping[str, object],
    ) -> MetadataFilter | None:
        handler = self.handler_for(resource, action)
        if handler is None:
            return None
        ctx = AuthContext(
            permissions=list(principal.permissions),
            # the SDK's protocol leaves __getitem__ unannotated (inferred `-> None`)
            user=cast(BaseUser, AuthUser(principal)),
            resource=resource,
            action=action,
        )
        if resource == "store":
            _namespace_tuple(value)
        result = await self._call(handler, ctx, value)
        if resource == "store":
            _namespace_tuple(value)
        if result is None or result is True:
            return None
        if result is False:
            raise AuthError("Forbidden", 403)
        if not isinstance(result, Mapping):
            raise AuthError(
                f"custom auth: the {resource}.{action} handler returned a "
                f"{type(result).__name__}; expected None, a bool or a filter dict",
                500,
            )
        found = cast("Mapping[object, object]", result)
        if problem := _filter_problem(found):
            raise AuthError(f"custom auth: the {resource}.{action} handler's {problem}", 500)
        return cast("MetadataFilter", found) or None

    async def _call(
        self, handler: OnHandler, ctx: AuthContext, value: MutableMapping[str, object]
    ) -> object:
        try:
            if inspect.iscoroutinefunction(handler):
                return await cast("Callable[..., Awaitable[object]]", handler)(ctx=ctx, value=value)
            result = await asyncio.to_thread(handler, ctx=ctx, value=value)
            return await result if inspect.isawaitable(result) else result
        except (AuthHTTPException, StarletteHTTPException) as exc:
            raise http_error(exc) from None
        except AssertionError as exc:
            raise AuthError(str(exc) or "Forbidden", 403) from None
        except AuthError:
            raise
        except Exception as exc:
            log.exception("custom auth handler %s.%s failed", ctx.resource, ctx.action)
            raise AuthError(
                f"custom auth: the {ctx.resource}.{ctx.action} handler failed "
                f"({type(exc).__name__})",
                500,
            ) from None
