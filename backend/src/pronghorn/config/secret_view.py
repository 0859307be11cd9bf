"""How the config APIs show and take secrets: a literal secret is shown as `***`; a value
that references the environment (`${VAR}`) is shown as written, since it holds no secret
itself. Taken back, `***` means "keep the stored value" (whatever it was)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MASK = "***"

# The values here are read from a YAML document or a request body: any JSON value.


def shown(value: object) -> object:
    """A secret as an API shows it."""
    if isinstance(value, str) and "${" in value:
        return value
    return MASK if value is not None else None


# Any: any YAML or JSON value in (ruamel's containers are untyped), the copy out has its
# shape (the API routers index it as they find it)
def plain(value: Any) -> Any:
    """Plain dicts and lists (from ruamel's commented containers), copied."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value
