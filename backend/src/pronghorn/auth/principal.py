"""The principal: the authenticated identity a request (and the runs it starts) acts as."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Role = Literal["admin", "user"]
PrincipalKind = Literal["session", "api_key", "custom", "anonymous", "system"]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is asking.

    `identity` is the owner id written on everything the principal creates (a local user's
    id, or the identity a custom `Auth.authenticate` handler returned). `extra` holds the
    further fields a custom handler returned, passed to the graph unchanged."""

    identity: str
    display_name: str
    role: Role = "user"
    kind: PrincipalKind = "session"
    username: str | None = None
    permissions: tuple[str, ...] = ()
    extra: Mapping[str, object] = field(default_factory=dict[str, object])

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def auth_user(self) -> dict[str, object]:
        """The user as a graph sees it in `config["configurable"]["langgraph_auth_user"]`
        (the shape of LangGraph's `BaseUser`: identity, display_name, is_authenticated,
        permissions, plus any custom fields)."""
        user: dict[str, object] = {
            **self.extra,
            "identity": self.identity,
            "display_name": self.display_name,
            "is_authenticated": self.kind != "anonymous",
            "permissions": list(self.permissions),
        }
        if self.kind == "custom":  # a custom handler's own `role` field reaches the graph
            user.setdefault("role", self.role)
        else:
            user["role"] = self.role
        return user


# `auth.mode: none`: every request acts as this one local user.
LOCAL_PRINCIPAL = Principal(
    identity="local", display_name="Local user", role="admin", kind="anonymous", username="local"
)
