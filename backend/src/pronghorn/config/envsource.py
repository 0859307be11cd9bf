"""Environment overrides (``PRONGHORN_SERVER__PORT=9000``) through pydantic-settings.

pydantic-settings does the work — name matching (case-insensitive), the ``__`` nesting,
JSON decoding of list/dict/section values, ``null`` for None — but it reads ``os.environ``;
this source reads an explicit mapping instead, so loading never depends on or mutates the
process environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pydantic import BaseModel
from pydantic_settings import EnvSettingsSource
from pydantic_settings.sources.utils import parse_env_vars

ENV_PREFIX = "PRONGHORN_"
ENV_NESTED_DELIMITER = "__"
ENV_NONE = "null"


class MappingEnvSource(EnvSettingsSource):
    """``EnvSettingsSource`` over a given mapping instead of ``os.environ``."""

    def __init__(self, model: type[BaseModel], environ: Mapping[str, str]) -> None:
        self._environ = dict(environ)
        super().__init__(
            model,  # type: ignore[arg-type]  # only model_fields/model_config are used
            case_sensitive=False,
            env_prefix=ENV_PREFIX,
            env_nested_delimiter=ENV_NESTED_DELIMITER,
            env_ignore_empty=False,
            env_parse_none_str=ENV_NONE,
        )

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(
            self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str
        )


def env_overrides(model: type[BaseModel], environ: Mapping[str, str]) -> dict[str, object]:
    """The nested override dict for ``model`` found in ``environ`` (may raise SettingsError).
    Its values are whatever pydantic-settings decoded (strings, JSON)."""
    return MappingEnvSource(model, environ)()


def override_paths(overrides: Mapping[str, object], prefix: str = "") -> dict[str, str]:
    """Dotted path -> the variable that set it, e.g. ``server.port -> PRONGHORN_SERVER__PORT``."""
    out: dict[str, str] = {}
    for key, value in overrides.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.update(override_paths(cast(dict[str, object], value), path))
        else:
            out[path] = ENV_PREFIX + path.replace(".", ENV_NESTED_DELIMITER).upper()
    return out


def deep_merge(base: Mapping[str, object], top: Mapping[str, object]) -> dict[str, object]:
    """``top`` wins; nested mappings merge key by key; anything else is replaced."""
    merged = dict(base)
    for key, value in top.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            merged[key] = deep_merge(
                cast(Mapping[str, object], below), cast(Mapping[str, object], value)
            )
        else:
            merged[key] = value
    return merged
