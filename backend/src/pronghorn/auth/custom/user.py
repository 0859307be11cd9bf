"""The user a custom `Auth` handler sees as `ctx.user`, rebuilt from the principal.

LangGraph hands `@auth.on` handlers a `BaseUser`: attributes `identity`, `display_name`,
`is_authenticated` and `permissions`, plus mapping access to every field the
`@auth.authenticate` handler returned (`ctx.user["org"]`, `ctx.user.get("org")`, and for
dict users `ctx.user.org`). `AuthUser` offers the same from a `Principal`, so handlers
written for the LangGraph server read the user the same way here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pronghorn.auth.principal import Principal

CORE_FIELDS = ("identity", "display_name", "is_authenticated", "permissions")


class AuthUser:
    """A read-only `langgraph_sdk.auth.types.BaseUser` over a principal."""

    __slots__ = ("_fields", "_principal")

    def __init__(self, principal: Principal) -> None:
        self._principal = principal
        self._fields: dict[str, object] = {
            **principal.extra,
            "identity": principal.identity,
            "display_name": principal.display_name,
            "is_authenticated": principal.kind != "anonymous",
            "permissions": list(principal.permissions),
        }

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
        return list(self._principal.permissions)

    def __getattr__(self, name: str) -> object:
        # only reached for names that are not attributes: the handler's extra fields
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"the user has no field {name!r}") from None

    def __getitem__(self, key: str) -> object:
        return self._fields[key]

    def __contains__(self, key: object) -> bool:
        return key in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def get(self, key: str, default: object = None) -> object:
        return self._fields.get(key, default)

    def keys(self) -> list[str]:
        return list(self._fields)

    def values(self) -> list[object]:
        return list(self._fields.values())

    def items(self) -> list[tuple[str, object]]:
        return list(self._fields.items())

    def dict(self) -> dict[str, object]:
        return dict(self._fields)

    def model_dump(self) -> dict[str, object]:
        return dict(self._fields)

    def __repr__(self) -> str:
        return f"AuthUser(identity={self.identity!r})"
