"""Two gateway apps in this process sharing one database and one Redis (each its own
broker, control bus and run manager): the replicas of a scale-out deployment.

The database is one SQLite file by default, or a fresh PostgreSQL database when
PRONGHORN_TEST_POSTGRES_URL is set. Redis keys get a random prefix per test, removed after.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runs.backends import PG_URL, database
from support.inproc import InProcessServer
from support.live import base_config
from support.redis_kit import REDIS_URL, RedisProxy, drop_prefix, new_prefix, require_redis

# Two apps in one process: FastAPI (building a route's fields) and LangGraph wrap some
# calls in `warnings.catch_warnings()`, which swaps the process-wide filters and is not
# thread-safe. One app's thread restoring its snapshot while the other's is inside such a
# block lets pydantic's UnsupportedFieldAttributeWarning (always muted by FastAPI itself)
# through as an error, and a request fails with 500. Only this third-party warning is muted.
MUTED = "ignore::pydantic.warnings.UnsupportedFieldAttributeWarning"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "scaleout" in item.nodeid:
            item.add_marker(pytest.mark.filterwarnings(MUTED))


GRAPHS = {"chatty": "testgraphs.chatty:graph", "echo": "testgraphs.echo:graph"}


@pytest.fixture
def prefix() -> Iterator[str]:
    require_redis()
    value = new_prefix()
    yield value
    asyncio.run(drop_prefix(value))


@pytest.fixture
def shared_db(tmp_path: Path) -> Iterator[dict[str, Any]]:
    kind = "postgres" if PG_URL else "sqlite"
    with database(kind, tmp_path) as (cfg, _):
        if kind == "sqlite":
            cfg = {"url": f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"}
        yield cfg


@pytest.fixture
def replica(
    tmp_path: Path, prefix: str, shared_db: dict[str, Any]
) -> Iterator[Callable[..., InProcessServer]]:
    """`replica(redis_url=..., broker={...}, **config)` starts one more gateway on the shared
    database and Redis prefix (`config`: top-level config sections, `graphs` included)."""
    apps: list[InProcessServer] = []

    def start(
        redis_url: str = REDIS_URL, broker: dict[str, Any] | None = None, **config: Any
    ) -> InProcessServer:
        cfg = base_config(
            **{"graphs": GRAPHS, **config},
            database=shared_db,
            broker={
                "kind": "redis",
                "redis_url": redis_url,
                "key_prefix": prefix,
                **(broker or {}),
            },
        )
        app = InProcessServer(tmp_path / f"replica{len(apps)}", cfg)
        apps.append(app)
        return app.start()

    yield start
    for app in apps:
        app.stop()


class ThreadedProxy:
    """A `RedisProxy` on an event loop of its own thread, driven from sync tests (`target`:
    any TCP service's URL, Redis by default)."""

    def __init__(self, target: str = REDIS_URL) -> None:
        self.proxy = RedisProxy(target)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return self.proxy.url

    def _do(self, coro: Any) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def start(self) -> None:
        if not self.thread.is_alive():
            self.thread.start()
        self._do(self.proxy.start())

    def stop(self) -> None:
        self._do(self.proxy.stop())

    def close(self) -> None:
        self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def redis_proxy() -> Iterator[ThreadedProxy]:
    require_redis()
    proxy = ThreadedProxy()
    proxy.start()
    yield proxy
    proxy.close()
