"""``${VAR}`` and ``${VAR:-default}`` substitution in every string value of a YAML tree.

Rules (the same as docker compose for these forms):

* ``${VAR}`` is replaced by the variable's value; an unset variable is an error that names
  the key path (``models[0].api_key: environment variable OPENAI_API_KEY is not set``).
* ``${VAR:-default}`` uses ``default`` when VAR is unset or empty.
* ``$${`` is a literal ``${`` (an escape); any other ``$`` is kept as is.
* Only values are substituted, never keys; substitution happens once (a value that itself
  contains ``${...}`` is not expanded again).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import cast

from pronghorn.config.errors import ConfigError, format_loc

_TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_REFERENCE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)


def interpolate_string(value: str, lookup: Mapping[str, str], where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "$${":
            return "${"
        inner = match.group(1)
        ref = _REFERENCE.fullmatch(inner) if inner is not None else None
        if ref is None:
            raise ConfigError(
                f"{where}: invalid reference {token!r}; use ${{VAR}}, ${{VAR:-default}} "
                "or $${ for a literal ${"
            )
        name, default = ref.group(1), ref.group(2)
        current = lookup.get(name)
        if default is not None:
            return current if current else default
        if current is None:
            raise ConfigError(f"{where}: environment variable {name} is not set")
        return current

    if "$" not in value:
        return value
    return _TOKEN.sub(replace, value)


def interpolate(data: Mapping[str, object], lookup: Mapping[str, str]) -> dict[str, object]:
    """A copy of the config document ``data`` with every string value interpolated."""
    return {key: _interpolate(value, lookup, (str(key),)) for key, value in data.items()}


def _interpolate(data: object, lookup: Mapping[str, str], loc: tuple[str | int, ...]) -> object:
    if isinstance(data, str):
        return interpolate_string(data, lookup, format_loc(loc))
    if isinstance(data, dict):
        items = cast(dict[object, object], data)  # parsed YAML
        return {key: _interpolate(value, lookup, (*loc, str(key))) for key, value in items.items()}
    if isinstance(data, list):
        values = cast(list[object], data)
        return [_interpolate(value, lookup, (*loc, index)) for index, value in enumerate(values)]
    return data
