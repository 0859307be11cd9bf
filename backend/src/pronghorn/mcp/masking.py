"""Secrets of the `mcp:` section as the API shows and takes them.

Secret values are every `env` and `headers` value and `oauth.client_secret` /
`oauth.refresh_token`. Shown, a literal secret is `***`; a value that references the
environment (`${VAR}`) is shown as written, since it holds no secret itself. Taken back,
`***` means "keep the stored value" (whatever it was, literal or reference).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from pronghorn.config.secret_view import MASK, plain, shown
from pronghorn.mcp.errors import McpConfigError

__all__ = ["MASK", "check_api_stdio", "mask_server", "unmask_server"]

_MAPS = ("env", "headers")
_OAUTH = ("client_secret", "refresh_token")


# Server entries are plain config JSON (from YAML or the API); plain() keys are strings.
def mask_server(raw: Mapping[str, object]) -> dict[str, object]:
    out: dict[str, object] = plain(raw)
    for key in _MAPS:
        section = out.get(key)
        if isinstance(section, dict):
            out[key] = {k: shown(v) for k, v in cast("dict[str, object]", section).items()}
    oauth = out.get("oauth")
    if isinstance(oauth, dict):
        secrets = cast("dict[str, object]", oauth)
        for key in _OAUTH:
            if key in secrets:
                secrets[key] = shown(secrets[key])
    return out


def unmask_server(
    name: str,
    new: Mapping[str, object],
    stored: Mapping[str, object] | None,
) -> dict[str, object]:
    """`new` with every `***` replaced by the stored value at the same place."""
    out: dict[str, object] = plain(new)
    old: dict[str, object] = plain(stored or {})

    def keep(where: str, container: object, before: object, keys: Iterable[str] | None) -> None:
        if not isinstance(container, dict):
            return
        now = cast("dict[str, object]", container)  # plain() keys are strings
        stored = cast("dict[str, object]", before) if isinstance(before, dict) else None
        for key in list(now) if keys is None else keys:
            if now.get(key) != MASK:
                continue
            if stored is None or key not in stored:
                raise McpConfigError(
                    f"mcp_servers.{name}.{where}{key}: '***' but no stored value to keep"
                )
            now[key] = stored[key]

    for section in _MAPS:
        keep(f"{section}.", out.get(section), old.get(section), None)
    keep("oauth.", out.get("oauth"), old.get("oauth"), _OAUTH)
    return out


_LOADER_ENV = ("LD_", "DYLD_")


def check_api_stdio(
    name: str,
    new: Mapping[str, object],
    stored: Mapping[str, object] | None,
    allowed: list[str],
) -> None:
    """Refuse a stdio server set through the API whose program is not in `allowed` (by
    bare name; '*' allows any) or whose env preloads code (LD_*, DYLD_*), unless its
    command, args and env are exactly what the file already has."""
    if new.get("type", "stdio") != "stdio":
        return
    old: dict[str, object] = plain(stored or {})
    if old.get("type", "stdio") == "stdio" and all(
        plain(new.get(k)) == old.get(k) for k in ("command", "args", "env")
    ):
        return
    command = new.get("command")
    if not isinstance(command, str) or not command:
        return  # the schema reports the missing command
    if "*" not in allowed and command not in allowed:
        raise McpConfigError(
            f"mcp_servers.{name}.command: {command!r} is not allowed through the API "
            f"(mcp.api_stdio_commands: {', '.join(allowed) or 'none'}); edit config.yaml instead"
        )
    env = new.get("env")
    if isinstance(env, Mapping):
        for key in cast("Mapping[object, object]", env):
            if str(key).upper().startswith(_LOADER_ENV):
                raise McpConfigError(f"mcp_servers.{name}.env.{key}: not allowed through the API")
