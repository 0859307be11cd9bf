"""The one owner of database connections.

SQLite (the default) is served by a single aiosqlite connection in WAL mode that the app's
tables, the LangGraph checkpointer and the LangGraph store all share, serialised by one
asyncio lock: SQLite has one writer anyway, and one connection means one set of pragmas, no
pool fighting over the file lock, and no `database is locked` between our own components.
PostgreSQL gets a normal asyncpg pool for the app tables and a psycopg pool for the
LangGraph checkpointer and store (those libraries speak psycopg).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

log = logging.getLogger("pronghorn.db")

T = TypeVar("T")

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-8000",  # 8 MB of page cache; the OS caches the file too
)


def default_sqlite_url(data_dir: Path) -> str:
    return f"sqlite+aiosqlite:///{(data_dir / 'pronghorn.db').as_posix()}"


class _SharedConnection:
    """The shared aiosqlite connection as SQLAlchemy sees it: closing it is a no-op.

    SQLAlchemy closes a connection it invalidates (for instance when a query is cancelled);
    the checkpointer and store share this one, so only `Database.close()` may close it.
    """

    __slots__ = ("_target",)

    def __init__(self, target: aiosqlite.Connection) -> None:
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)

    async def close(self) -> None:
        return None

    def stop(self) -> None:
        return None


def is_busy_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text or "sqlite_busy" in text


class Database:
    """Engine, dialect facts and the unit-of-work helpers every repository uses."""

    def __init__(
        self, url: str, *, busy_timeout_ms: int = 5000, pool_size: int = 10, echo: bool = False
    ) -> None:
        self.url = url
        parsed = make_url(url)
        self.dialect = parsed.get_backend_name()  # "sqlite" | "postgresql"
        self.busy_timeout_ms = busy_timeout_ms
        self.pool_size = pool_size
        self.echo = echo
        self._engine: AsyncEngine | None = None
        self._sync_engine: Engine | None = None
        self._raw: aiosqlite.Connection | None = None
        # SQLite: every use of the shared connection takes this lock.
        self.lock: asyncio.Lock | None = asyncio.Lock() if self.is_sqlite else None
        if self.is_sqlite:
            database = parsed.database or ":memory:"
            self.sqlite_path: str | None = database
        else:
            self.sqlite_path = None

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            raise RuntimeError("Database.connect() was not awaited")
        return self._engine

    @property
    def raw_sqlite(self) -> aiosqlite.Connection:
        """The shared aiosqlite connection (SQLite only), for the checkpointer and store."""
        if self._raw is None:
            raise RuntimeError("not a connected SQLite database")
        return self._raw

    def psycopg_conninfo(self) -> str:
        """The PostgreSQL URL in the libpq form psycopg (LangGraph's saver/store) wants."""
        parsed = make_url(self.url).set(drivername="postgresql")
        return parsed.render_as_string(hide_password=False)

    async def connect(self) -> None:
        if self._engine is not None:
            return
        if self.is_sqlite:
            path = self.sqlite_path or ":memory:"
            if path != ":memory:":
                await asyncio.to_thread(Path(path).parent.mkdir, parents=True, exist_ok=True)
            raw = await aiosqlite.connect(path, timeout=self.busy_timeout_ms / 1000)
            await raw.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            for pragma in SQLITE_PRAGMAS:
                await raw.execute(pragma)
            await raw.commit()
            self._raw = raw
            shared = _SharedConnection(raw)
            handed_out = False

            async def creator() -> Any:
                nonlocal handed_out
                if handed_out:
                    # SQLAlchemy invalidated the previous checkout (e.g. a cancelled query):
                    # drop whatever transaction it left open before reusing the connection.
                    with contextlib.suppress(Exception):
                        await raw.rollback()
                handed_out = True
                return shared

            # The same sqlite3 connection, driven synchronously from aiosqlite's own thread
            # by `run()`: a whole unit of work costs one thread hop instead of several per
            # statement.
            self._sync_engine = create_engine(
                "sqlite://",
                creator=lambda: raw._conn,
                poolclass=StaticPool,
                pool_reset_on_return=None,
                echo=self.echo,
            )
            engine = create_async_engine(
                "sqlite+aiosqlite://",
                async_creator=creator,
                poolclass=StaticPool,
                # Every unit of work ends in an explicit commit or rollback: skip the
                # pool's extra rollback round trip when a connection is returned.
                pool_reset_on_return=None,
                echo=self.echo,
            )
        else:
            engine = create_async_engine(
                self.url,
                pool_size=self.pool_size,
                max_overflow=self.pool_size,
                pool_pre_ping=True,
                echo=self.echo,
            )
        self._engine = engine

    async def close(self) -> None:
        if self._sync_engine is not None:
            self._sync_engine = None  # its one connection is the shared one, closed below
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None
        if self._raw is not None:
            with contextlib.suppress(Exception):
                await self._raw.close()
            self._raw = None

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        if self.lock is None:
            yield
        else:
            async with self.lock:
                yield

    @contextlib.asynccontextmanager
    async def tx(self) -> AsyncIterator[AsyncConnection]:
        """One transaction: commit on success, roll back on error."""
        async with self._locked(), self.engine.begin() as conn:
            yield conn

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A read-only unit of work (still serialised on SQLite's shared connection)."""
        async with self._locked(), self.engine.connect() as conn:
            try:
                yield conn
            finally:
                await conn.rollback()

    async def run(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn(conn)` — a synchronous unit of work over SQLAlchemy Core — as one
        transaction: committed if it returns, rolled back if it raises. On SQLite it runs in
        the connection's own thread in a single hop; elsewhere through the async driver."""
        if self._sync_engine is not None:
            engine = self._sync_engine

            def _unit() -> T:
                with engine.begin() as conn:
                    return fn(conn)

            async with self._locked():
                return await self.raw_sqlite._execute(_unit)
        async with self.engine.begin() as conn:
            return await conn.run_sync(fn)

    async def retry(self, fn: Callable[[], Awaitable[T]], *, attempts: int = 8) -> T:
        """Run ``fn`` again with backoff while SQLite reports busy/locked."""
        delay = 0.01
        for attempt in range(attempts):
            try:
                return await fn()
            except (OperationalError, aiosqlite.OperationalError) as exc:
                if not self.is_sqlite or not is_busy_error(exc) or attempt == attempts - 1:
                    raise
                log.warning("database busy, retrying", extra={"attempt": attempt + 1})
                await asyncio.sleep(delay + random.uniform(0, delay))
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")

    async def ping(self) -> bool:
        from sqlalchemy import text

        try:
            async with self.read() as conn:
                await conn.execute(text("SELECT 1"))
            return True
        except Exception:
            return False
