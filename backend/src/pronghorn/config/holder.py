"""The live config snapshot, its reload and the file watcher.

Readers take ``holder.current`` (a plain attribute read, swapped atomically on reload) and
keep that object for as long as they need a consistent view, e.g. a whole run.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

# awatch's stop_event names trio.Event, and trio is not installed (nor used): that one
# member of its union is unknown to the checker
from watchfiles import Change, awatch  # pyright: ignore[reportUnknownVariableType]

from pronghorn.config.errors import ConfigError
from pronghorn.config.loader import (
    DOTENV_NAME,
    LoadedConfig,
    config_hash,
    load_config,
    public_config_hash,
    resolve_dotenv_path,
)
from pronghorn.config.restart import changed_paths, merge_startup_only, restart_required
from pronghorn.config.schema.app import AppConfig

logger = logging.getLogger("pronghorn.config")

Listener = Callable[[AppConfig, AppConfig], Awaitable[None] | None]

WATCH_DEBOUNCE_MS = 50
WATCH_STEP_MS = 20
_WATCH_RETRY_S = 1.0


class ConfigHolder:
    """Owns the live ``AppConfig``; reloads it from the file it was loaded from.

    ``environ`` (default: ``os.environ`` at each reload) and ``dotenv`` are passed to
    ``load_config`` on every reload, as at startup.
    """

    def __init__(
        self,
        loaded: LoadedConfig,
        environ: Mapping[str, str] | None = None,
        *,
        dotenv: Path | None = None,
    ) -> None:
        self._startup = loaded.config
        self._current = loaded.config
        self._source_path = loaded.source_path
        self._environ = environ
        self._dotenv = dotenv
        self._version_hash = loaded.version_hash  # of the live (merged) config
        self._file_hash: str = loaded.version_hash  # of the last valid config read from disk
        # An empty file is refused on reload unless the running config came from one.
        self._ran_blank = loaded.blank
        self._loaded_at = loaded.loaded_at
        self._last_error: str | None = None
        self._restart_required: list[str] = []
        self._listeners: list[Listener] = []
        self._failure_listeners: list[Callable[[str], None]] = []
        self._lock = asyncio.Lock()
        self.edit_lock = asyncio.Lock()  # one API edit of the file at a time (file_edit.py)
        # Set once `watch` watches the file (and has read it once more): a change written
        # after it is seen. The app's startup waits for it; so do tests, instead of sleeping.
        self.watching = asyncio.Event()
        # Without a config file: where the settings pages may create one (the runtime sets
        # it to <data_dir>/config.yaml); `adopt` then makes it this holder's file.
        self.first_run_path: Path | None = None
        self._adopted = asyncio.Event()

    @property
    def current(self) -> AppConfig:
        return self._current

    @property
    def source_path(self) -> Path | None:
        return self._source_path

    @property
    def version(self) -> str:
        """The live config's full content hash (secrets included): changes on every change,
        including a rotated key. Internal: `status()` shows a hash with secrets masked."""
        return self._version_hash

    def status(self) -> dict[str, Any]:  # JSON for GET /api/config/status
        return {
            "version_hash": public_config_hash(self._current),
            "loaded_at": self._loaded_at.isoformat(),
            "source_path": str(self._source_path) if self._source_path else None,
            "last_error": self._last_error,
            "restart_required": list(self._restart_required),
        }

    def adopt(self, path: Path) -> None:
        """From now on, the config comes from ``path`` (a file just created by a settings
        page on a server that started without one): reloads read it, the watcher watches it."""
        if self._source_path is not None:
            raise ValueError("this config already has a file")
        self._source_path = path
        self._adopted.set()

    def check_file(self, path: Path) -> AppConfig:
        """Load `path` as a reload would (same environment and `.env`); raise `ConfigError`
        if it is invalid. Blocking: call it in a worker thread."""
        return load_config(path, self._environ, self._dotenv).config

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        """Call ``callback(old, new)`` after each applied change; returns an unsubscribe."""
        self._listeners.append(callback)

        def remove() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return remove

    def add_failure_listener(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(message)`` after each reload that was refused (the old config is
        kept); returns an unsubscribe."""
        self._failure_listeners.append(callback)

        def remove() -> None:
            if callback in self._failure_listeners:
                self._failure_listeners.remove(callback)

        return remove

    async def reload(self) -> bool:
        """Re-read and apply the config; False (old snapshot kept) if it is invalid."""
        async with self._lock:
            try:
                loaded = await asyncio.to_thread(
                    load_config, self._source_path, self._environ, self._dotenv
                )
            except ConfigError as exc:
                return self._fail(str(exc))
            except Exception as exc:  # a bug, not a bad file: still keep serving
                logger.exception("config reload crashed")
                return self._fail(f"unexpected error while loading config: {exc!r}")
            if loaded.blank and not self._ran_blank:
                # Most likely a save caught half-way (truncated, not yet written): as YAML it
                # would be "all defaults", dropping every graph and channel until the next
                # event. An operator who wants the defaults writes `{}`.
                return self._fail(
                    f"{self._source_path} is empty (a save in progress?): write {{}} "
                    "for all defaults"
                )
            self._ran_blank = loaded.blank
            if self._last_error is not None:
                logger.info("config is valid again (version %s)", loaded.version_hash[:12])
            self._last_error = None
            if loaded.version_hash == self._file_hash:
                logger.debug("config unchanged (version %s)", loaded.version_hash[:12])
                return True
            self._file_hash = loaded.version_hash

            pending = restart_required(self._startup, loaded.config)
            if pending and pending != self._restart_required:
                logger.warning(
                    "config changes need a restart and are not applied: %s", ", ".join(pending)
                )
            elif self._restart_required and not pending:
                logger.info("config matches the running startup-only values again")
            self._restart_required = pending

            new = merge_startup_only(self._startup, loaded.config)
            new_hash = loaded.version_hash if not pending else config_hash(new)
            if new_hash == self._version_hash:
                return True
            old = self._current
            changed = changed_paths(old, new)
            self._current = new  # the atomic swap
            self._version_hash = new_hash
            self._loaded_at = loaded.loaded_at
            logger.info(
                "config reloaded: version %s, changed: %s",
                new_hash[:12],
                ", ".join(changed) or "-",
            )
            await self._notify(old, new)
            return True

    def _fail(self, message: str) -> bool:
        self._last_error = message
        for callback in list(self._failure_listeners):
            try:
                callback(message)
            except Exception:
                logger.exception("config failure listener %r failed", callback)
        logger.error(
            "config reload failed, still running version %s: %s",
            self._version_hash[:12],
            message,
        )
        return False

    async def _notify(self, old: AppConfig, new: AppConfig) -> None:
        for callback in list(self._listeners):
            try:
                result = callback(old, new)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                logger.exception("config listener %r failed", callback)

    def _watched_files(self) -> set[Path]:
        assert self._source_path is not None
        files = {self._source_path.absolute()}
        try:
            dotenv = resolve_dotenv_path(self._source_path, self._dotenv)
        except ConfigError:
            dotenv = None
        if dotenv is not None:
            files.add(dotenv.absolute())
        return files

    async def watch(self, stop: asyncio.Event) -> None:
        """Reload whenever the config file (or the ``.env`` in use) changes, until ``stop``.

        The parent directory is watched, not the file, because editors save by writing a
        new file and renaming it over the old one. Once watching, the file is read again,
        so an edit made before the watcher started is applied too. Without a config file
        this just waits.
        """
        if self._source_path is None:
            self.watching.set()  # nothing to watch: nothing can be missed
            stopped = asyncio.ensure_future(stop.wait())
            adopted = asyncio.ensure_future(self._adopted.wait())
            try:
                await asyncio.wait({stopped, adopted}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopped.cancel()
                adopted.cancel()
            if stop.is_set() or self._source_path is None:
                return
        files = await asyncio.to_thread(self._watched_files)
        dirs = sorted({f.parent for f in files})
        names = {f.name for f in files} | {DOTENV_NAME}  # also a .env created later

        def wanted(_change: Change, raw: str) -> bool:
            name = Path(raw).name
            # "..data" is how Kubernetes swaps a mounted ConfigMap (a symlink flip).
            return name in names or name.startswith("..")

        logger.info("watching %s for config changes", ", ".join(str(f) for f in sorted(files)))
        while not stop.is_set():
            batches = awatch(
                *dirs,
                watch_filter=wanted,
                debounce=WATCH_DEBOUNCE_MS,
                step=WATCH_STEP_MS,
                stop_event=stop,
                recursive=False,
            )
            try:
                # The generator's first step builds its file watcher (which keeps every
                # change from then on) before its first await; that step runs before this
                # task resumes from sleep(0) (the loop runs callbacks in order), so from
                # then on the file is watched.
                first = asyncio.ensure_future(anext(batches, None))
                try:
                    await asyncio.sleep(0)
                    # An edit made before the watcher started (between the startup load
                    # and now, or while a failed watcher waited to retry) left no event:
                    # read the file once more; a change from now on is an event.
                    await self.reload()
                    self.watching.set()
                    changes = await first
                finally:
                    if not first.done():
                        first.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await first
                while changes is not None:
                    await self.reload()
                    changes = await anext(batches, None)
            except Exception as exc:  # e.g. the directory vanished: retry
                logger.warning("config watcher error: %r; retrying", exc)
                await _sleep_or_stop(stop, _WATCH_RETRY_S)
            finally:
                await batches.aclose()


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
