"""The app-level Runtime: every long-lived component, built once in the lifespan and passed
explicitly to whoever needs it. Nothing here is a module-level singleton."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from pronghorn.config.schema import AppConfig
from pronghorn.graphs.registry import GraphRegistry
from pronghorn.persistence.db import Database, default_sqlite_url

if TYPE_CHECKING:
    from pronghorn.config.holder import ConfigHolder

log = logging.getLogger("pronghorn.runtime")


@dataclass
class Runtime:
    settings: ConfigHolder
    data_dir: Path
    db: Database
    checkpointer: BaseCheckpointSaver
    store: BaseStore
    graphs: GraphRegistry
    extras: dict[str, Any] = field(default_factory=dict)
    runs: Any = None
    broker: Any = None
    models: Any = None
    sandbox: Any = None

    @property
    def config(self) -> AppConfig:
        """The config snapshot current right now (runs capture it at their start)."""
        return self.settings.current


def resolve_data_dir(config: AppConfig, base_dir: Path) -> Path:
    path = Path(config.data_dir).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return path.resolve()


def database_url(config: AppConfig, data_dir: Path) -> str:
    return config.database.url or default_sqlite_url(data_dir)


@contextlib.asynccontextmanager
async def open_database(config: AppConfig, data_dir: Path) -> AsyncIterator[Database]:
    db = Database(
        database_url(config, data_dir),
        busy_timeout_ms=config.database.busy_timeout_ms,
        pool_size=config.database.pool_size,
        echo=config.database.echo,
    )
    await db.connect()
    try:
        yield db
    finally:
        await db.close()
