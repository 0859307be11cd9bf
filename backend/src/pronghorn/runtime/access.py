"""Who a service call acts for: the principal, and whether an admin asked to see everyone's.

Every service that reads or writes an owned resource (threads, runs, crons, assistants,
store items, thread files) takes an `Access` explicitly. `owner_scope` is the owner id the
call is confined to, or None when an admin asked for every user's resources (the
`X-Pronghorn-All-Users: true` header; docs/security.md, "Isolation").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from langgraph_sdk.auth.types import BaseUser

from pronghorn.auth.principal import Principal, PrincipalKind, Role


@dataclass(frozen=True, slots=True)
class Access:
    principal: Principal
    all_users: bool = False  # asked for; only honoured for admins

    @property
    def identity(self) -> str:
        return self.principal.identity

    @property
    def sees_all(self) -> bool:
        return self.all_users and self.principal.is_admin

    @property
    def owner_scope(self) -> str | None:
        """The owner every resource this call touches must have (None: any owner)."""
        return None if self.sees_all else self.principal.identity

    def may_see(self, owner_id: str | None) -> bool:
        return self.sees_all or owner_id == self.principal.identity


def principal_record(principal: Principal) -> dict[str, object]:
    """The principal as stored on a run or cron row (JSON), so a run resumed after a
    restart, or fired by a cron, executes as the same principal."""
    return {
        "identity": principal.identity,
        "display_name": principal.display_name,
        "role": principal.role,
        "kind": principal.kind,
        "username": principal.username,
        "permissions": list(principal.permissions),
        "extra": dict(principal.extra),
    }


_KINDS: tuple[PrincipalKind, ...] = ("session", "api_key", "custom", "anonymous", "system")
_KIND_BY_NAME: dict[str, PrincipalKind] = {k: k for k in _KINDS}


def principal_from_record(record: object, owner_id: str | None) -> Principal:
    """The principal of a stored record; a row without one (made before owners were
    recorded) acts as a plain user named by its owner id."""
    identity = owner_id or "local"
    if not isinstance(record, Mapping):
        return Principal(identity=identity, display_name=identity, kind="system")
    rec = cast(Mapping[str, object], record)
    role: Role = "admin" if rec.get("role") == "admin" else "user"
    kind = _KIND_BY_NAME.get(str(rec.get("kind")), "system")
    perms = rec.get("permissions")
    extra = rec.get("extra")
    username = rec.get("username")
    return Principal(
        identity=str(rec.get("identity") or identity),
        display_name=str(rec.get("display_name") or identity),
        role=role,
        kind=kind,
        username=username if isinstance(username, str) else None,
        permissions=tuple(str(p) for p in cast(list[object], perms))
        if isinstance(perms, list)
        else (),
        extra=dict(cast(Mapping[str, object], extra)) if isinstance(extra, Mapping) else {},
    )


class GraphUser(Mapping[str, object]):
    """A principal as LangGraph's `BaseUser` (`ServerRuntime.user` of a graph factory):
    identity, display_name, is_authenticated, permissions, and item access to every field
    of `Principal.auth_user()`."""

    def __init__(self, principal: Principal) -> None:
        self._principal = principal
        self._fields = principal.auth_user()

    @property
    def identity(self) -> str:
        return self._principal.identity

    @property
    def display_name(self) -> str:
        return self._principal.display_name

    @property
    def is_authenticated(self) -> bool:
        return self._principal.kind != "anonymous"

    @property
    def permissions(self) -> Sequence[str]:
        return self._principal.permissions

    def __getitem__(self, key: str) -> object:
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


def graph_user(principal: Principal) -> BaseUser | None:
    """The user a graph factory's `ServerRuntime` gets: None for the anonymous local user
    of `auth.mode: none` (as the reference server without auth), else the principal."""
    if principal.kind == "anonymous":
        return None
    # GraphUser has every member of the BaseUser protocol; the protocol's untyped
    # `__getitem__(self, key)` and Mapping's positional-only one do not unify for pyright.
    return cast(BaseUser, GraphUser(principal))
