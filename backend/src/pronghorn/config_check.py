"""``pronghorn config check``: load a config the way the server would and say what is wrong.

Beside the config package, not in it: the model checks it runs belong to `models/`, which
itself reads the config."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pronghorn.config.errors import ConfigError
from pronghorn.config.loader import load_config, resolve_config_path
from pronghorn.config.schema.app import AppConfig
from pronghorn.models.factory import ModelFactory


def config_warnings(config: AppConfig, environ: Mapping[str, str]) -> list[str]:
    """Valid but probably unintended settings."""
    warnings: list[str] = []
    # the models package owns the model checks (providers, keys, default_model)
    warnings += ModelFactory(config, env=environ).problems()
    if config.agent.loop_warn_repeats >= config.agent.loop_stop_repeats:
        warnings.append("agent.loop_warn_repeats should be below agent.loop_stop_repeats")
    if config.agent.tool_output_soft_chars > config.agent.tool_output_hard_chars:
        warnings.append("agent.tool_output_soft_chars is above agent.tool_output_hard_chars")
    if config.uploads.max_file_bytes > config.uploads.max_total_bytes:
        warnings.append("uploads.max_file_bytes is above uploads.max_total_bytes")
    if config.server.host not in ("127.0.0.1", "::1", "localhost"):
        warnings.append(
            f"server.host {config.server.host!r} accepts connections from other machines"
        )
    return warnings


def check_config(
    path: str | Path | None,
    environ: Mapping[str, str] | None = None,
) -> tuple[bool, str]:
    """(ok, human-readable report). ``path`` None resolves like the server does
    (``$PRONGHORN_CONFIG``, then ``./config.yaml``, then built-in defaults)."""
    env = os.environ if environ is None else environ
    try:
        resolved = resolve_config_path(str(path) if path is not None else None, env)
        loaded = load_config(resolved, env)
    except ConfigError as exc:
        return False, f"config invalid: {exc}"
    config = loaded.config
    source = str(loaded.source_path) if loaded.source_path else "built-in defaults (no file)"
    lines = [
        f"config OK: {source}",
        f"  version {loaded.version_hash[:12]}; {len(config.models)} model(s), "
        f"{len(config.graphs)} extra graph(s); broker {config.broker.kind}; "
        f"listening on {config.server.host}:{config.server.port}",
    ]
    lines += [f"  warning: {w}" for w in config_warnings(config, env)]
    return True, "\n".join(lines)
