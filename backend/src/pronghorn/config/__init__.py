"""Configuration: schema, loading, hot reload.

The typical startup::

    path = resolve_config_path(cli_path, os.environ)
    holder = ConfigHolder(load_config(path))        # raises ConfigError when invalid
    asyncio.create_task(holder.watch(stop_event))   # hot reload
    config = holder.current                         # a consistent, immutable snapshot
"""

from pronghorn.config.errors import ConfigError
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import LoadedConfig, load_config, resolve_config_path
from pronghorn.config.restart import STARTUP_ONLY, merge_startup_only, restart_required
from pronghorn.config.schema.app import AppConfig

__all__ = [
    "STARTUP_ONLY",
    "AppConfig",
    "ConfigError",
    "ConfigHolder",
    "LoadedConfig",
    "load_config",
    "merge_startup_only",
    "resolve_config_path",
    "restart_required",
]
