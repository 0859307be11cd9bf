"""`auth.mode: custom`: run a `langgraph_sdk.Auth` object (named by `auth.custom`, e.g.
`./auth.py:auth`) unchanged: its `@auth.authenticate` handler authenticates each request
(custom/authenticate.py) and its `@auth.on` handlers authorize each action
(custom/authorize.py).

The runtime imports the object (with the loader that imports graphs) and hands it to
`custom_auth`, which checks it and builds the authenticator and the authorizer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from langgraph_sdk import Auth

from pronghorn.auth.custom.authenticate import (
    AuthenticateHandler,
    CustomAuthConfigError,
    CustomAuthenticator,
)
from pronghorn.auth.custom.authorize import CustomAuthorizer, OnHandler

log = logging.getLogger("pronghorn.auth")

# What the LangGraph server can dispatch: (resource, action) pairs handlers may cover.
DISPATCHED: dict[str, tuple[str, ...]] = {
    "threads": ("create", "read", "update", "delete", "search", "create_run"),
    "assistants": ("create", "read", "update", "delete", "search"),
    "crons": ("create", "read", "update", "delete", "search"),
    "store": ("put", "get", "search", "delete", "list_namespaces"),
}

__all__ = ["CustomAuth", "CustomAuthConfigError", "custom_auth", "uncovered_actions"]


@dataclass(frozen=True, slots=True)
class CustomAuth:
    authenticator: CustomAuthenticator
    authorizer: CustomAuthorizer


@dataclass(frozen=True, slots=True)
class _Registrations:
    authenticate: AuthenticateHandler | None
    handlers: dict[tuple[str, str], list[OnHandler]]
    global_handlers: list[OnHandler]


def _registrations(auth: Auth) -> _Registrations:
    """What the decorators registered (the SDK keeps it in private attributes, which the
    LangGraph server reads the same way)."""
    return _Registrations(
        authenticate=auth._authenticate_handler,  # pyright: ignore[reportPrivateUsage]
        handlers={
            key: list(found)
            for key, found in auth._handlers.items()  # pyright: ignore[reportPrivateUsage]
        },
        global_handlers=list(auth._global_handlers),  # pyright: ignore[reportPrivateUsage]
    )


def uncovered_actions(auth: Auth) -> list[str]:
    """`resource.action` pairs no handler covers (allowed unfiltered), when the object has
    some `@auth.on` handlers but neither a global one nor a catch-all."""
    found = _registrations(auth)
    if not found.handlers and not found.global_handlers:
        return []
    if found.global_handlers or ("*", "*") in found.handlers:
        return []
    missing: list[str] = []
    for resource, actions in DISPATCHED.items():
        for action in actions:
            keys = [(resource, action), (resource, "*"), ("*", action)]
            if not any(key in found.handlers for key in keys):
                missing.append(f"{resource}.{action}")
    return missing


def custom_auth(obj: object, spec: str) -> CustomAuth:
    """The authenticator and authorizer of the `Auth` object `obj` (loaded from `spec`);
    raises `CustomAuthConfigError` when it is not one or a handler cannot be run."""
    if not isinstance(obj, Auth):
        raise CustomAuthConfigError(
            f"auth.custom {spec!r} is a {type(obj).__name__}, not a langgraph_sdk.Auth "
            "(create it with `auth = Auth()`)"
        )
    found = _registrations(obj)
    try:
        authenticator = CustomAuthenticator(found.authenticate)
    except CustomAuthConfigError as exc:
        raise CustomAuthConfigError(f"auth.custom {spec!r}: {exc}") from None
    if found.authenticate is None:
        log.warning(
            "auth.custom %r has no @auth.authenticate handler: every request is anonymous",
            spec,
        )
    if missing := uncovered_actions(obj):
        log.warning(
            "auth.custom %r has no @auth.on handler for %s: those actions are allowed "
            "unfiltered (add a default-deny `@auth.on` handler to refuse them)",
            spec,
            ", ".join(missing),
        )
    return CustomAuth(
        authenticator=authenticator,
        authorizer=CustomAuthorizer(found.handlers, found.global_handlers),
    )
