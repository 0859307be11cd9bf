"""The app-level AppRuntime: every long-lived component, built once in the lifespan and passed
explicitly to whoever needs it. Nothing here is a module-level singleton."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, TypeVar, overload

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from pronghorn.auth.authenticator import Authenticator
from pronghorn.auth.authorizer import Authorizer
from pronghorn.auth.oidc.client import OidcClient
from pronghorn.auth.services import AuthServices
from pronghorn.config.schema.app import AppConfig
from pronghorn.graphs.registry import GraphRegistry
from pronghorn.persistence.db import Database, default_sqlite_url
from pronghorn.runtime.observability.metrics import Metrics
from pronghorn.runtime.services.governance import SqlGovernance
from pronghorn.runtime.services.skills import SkillCatalog
from pronghorn.sandbox.convert import DocumentConverter

if TYPE_CHECKING:
    from pronghorn.auth.request_rate import RateBuckets
    from pronghorn.config.holder import ConfigHolder
    from pronghorn.mcp.server_manager import McpManager
    from pronghorn.memory.service import MemoryService
    from pronghorn.models.factory import ModelFactory
    from pronghorn.runtime.cluster.replicas import ReplicaPresence
    from pronghorn.runtime.engine.control import ControlBus
    from pronghorn.runtime.engine.run_manager import RunManager
    from pronghorn.runtime.events.broker import EventBroker
    from pronghorn.runtime.observability.trace_vendors import VendorCallbacks
    from pronghorn.runtime.observability.tracing import Tracing
    from pronghorn.runtime.services.scheduler import Scheduler
    from pronghorn.runtime.wiring.graph_reload import GraphReloader
    from pronghorn.sandbox.base import SandboxProvider
    from pronghorn.subagents import SubagentPool

log = logging.getLogger("pronghorn.runtime")

T = TypeVar("T")

Component = Literal[
    "models",
    "tracing",
    "sandbox",
    "mcp",
    "broker",
    "control",
    "memory",
    "runs",
    "scheduler",
    "subagents",
    "replicas",
    "graph_reloader",
]


class NotStarted(RuntimeError):
    """A component read before the lifespan started it (a wiring bug, never a user error)."""


class Started(Generic[T]):
    """An AppRuntime field set when its component starts (runtime/wiring/components/core.py; the
    model factory is replaced on each config change).

    Reading it earlier raises `NotStarted` instead of handing out `None`, so every reader
    sees the exact type (`runtime.runs` is a `RunManager`, never optional)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.slot = f"_started_{name}"

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> Started[T]: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> T: ...
    def __get__(self, obj: object | None, objtype: type | None = None) -> T | Started[T]:
        if obj is None:
            return self
        try:
            value: T = obj.__dict__[self.slot]
        except KeyError:
            raise NotStarted(f"runtime.{self.name} is used before it has started") from None
        return value

    def __set__(self, obj: object, value: T) -> None:
        obj.__dict__[self.slot] = value


class StoreSweeper:
    """Expires store items before reads, at most once per `every_s`: the LangGraph stores
    only drop expired items in their periodic sweep (minutes apart) and SQLite's still
    returns them on read, so the store API sweeps first."""

    def __init__(self, store: BaseStore, every_s: float = 0.5) -> None:
        self.store = store
        self.every_s = every_s
        self._last = float("-inf")

    async def before_read(self) -> None:
        sweep = getattr(self.store, "sweep_ttl", None)
        if sweep is None or time.monotonic() - self._last < self.every_s:
            return
        self._last = time.monotonic()
        await sweep()


class AppRuntime:
    """The core (config, data dir, database, checkpointer, store, graphs) is given at
    construction; the components are set once each as the lifespan starts them, in order:
    models, sandbox, mcp, broker, memory, runs, scheduler."""

    models: Started[ModelFactory] = Started()
    tracing: Started[Tracing] = Started()
    vendor_callbacks: Started[VendorCallbacks] = Started()
    rate_buckets: Started[RateBuckets] = Started()
    sandbox: Started[SandboxProvider] = Started()
    mcp: Started[McpManager] = Started()
    broker: Started[EventBroker] = Started()
    memory: Started[MemoryService] = Started()
    control: Started[ControlBus] = Started()  # set with the broker (signals between processes)
    runs: Started[RunManager] = Started()
    scheduler: Started[Scheduler] = Started()
    subagents: Started[SubagentPool] = Started()
    replicas: Started[ReplicaPresence] = Started()  # this replica's card (cluster view)
    graph_reloader: Started[GraphReloader] = Started()  # live graph reload

    def __init__(
        self,
        *,
        settings: ConfigHolder,
        data_dir: Path,
        db: Database,
        checkpointer: BaseCheckpointSaver[str],
        store: BaseStore,
        graphs: GraphRegistry,
        authenticator: Authenticator,
        authorizer: Authorizer,
        auth: AuthServices | None = None,
        oidc: OidcClient | None = None,
        config_dir: Path | None = None,
    ) -> None:
        self.settings = settings
        self.data_dir = data_dir
        self.db = db
        self.checkpointer = checkpointer
        self.store = store
        self.graphs = graphs
        self.authenticator = authenticator
        self.authorizer = authorizer
        # Limits, trusted proxies and session lifetime (built from the config when not given)
        if auth is None:  # e.g. an AppRuntime built by a test: the config's (or default) settings
            try:
                current = settings.current
            except AttributeError:
                current = AppConfig()
            auth = AuthServices.from_config(current.auth, current.server)
        self.auth = auth
        # Single sign-on with auth.oidc's issuer (None when not configured)
        self.oidc = oidc
        self.store_sweeper = StoreSweeper(store)
        # Skills: discovered from files, enabled state in the database (runtime/services/skills.py)
        self.skills = SkillCatalog(settings, data_dir, db, config_dir or data_dir)
        # Usage ledger and audit of the lead agent's budgets, approvals and guardrails
        self.governance = SqlGovernance(db)
        # The Prometheus series of this app (its own registry; runtime/observability/metrics.py)
        self.metrics = Metrics()
        # Markdown copies of uploaded documents (sandbox/convert.py)
        self.documents = DocumentConverter()

    @property
    def config(self) -> AppConfig:
        """The config snapshot current right now (runs capture it at their start)."""
        return self.settings.current

    def is_started(self, component: Component) -> bool:
        return f"_started_{component}" in self.__dict__


def resolve_data_dir(config: AppConfig, base_dir: Path) -> Path:
    path = Path(config.data_dir).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return path.resolve()


def database_url(config: AppConfig, data_dir: Path) -> str:
    return config.database.url or default_sqlite_url(data_dir)


def statement_timeout_s(config: AppConfig) -> float:
    """`database.statement_timeout_s`, by default half of the run lease."""
    configured = config.database.statement_timeout_s
    return config.runs.lease_s / 2 if configured is None else configured


@contextlib.asynccontextmanager
async def open_database(config: AppConfig, data_dir: Path) -> AsyncGenerator[Database, None]:
    db = Database(
        database_url(config, data_dir),
        busy_timeout_ms=config.database.busy_timeout_ms,
        pool_size=config.database.pool_size,
        pool_timeout_s=config.database.pool_timeout_s,
        idle_in_transaction_timeout_s=config.database.idle_in_transaction_timeout_s,
        statement_timeout_s=statement_timeout_s(config),
        echo=config.database.echo,
    )
    await db.connect()
    try:
        yield db
    finally:
        await db.close()
