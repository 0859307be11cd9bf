"""Edit `config.yaml` from the API: a comment-preserving round trip (ruamel.yaml), validated
exactly as a reload would read it, then swapped in atomically.

The edited document is written to a temporary file beside the config (so relative paths and
the `.env` resolve the same), loaded with the live holder's environment, and only if it is
valid renamed over the config file; the holder then reloads it at once (the watcher's own
reload finds it unchanged). Comments, key order and quoting elsewhere in the file are kept;
values written by the API are plain YAML. The file gets a first and a last comment line
(``file_marks.py``): the loader refuses a file that has the first and lacks the last — one
cut short — rather than read it as a smaller valid config.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pronghorn.config.errors import ConfigError
from pronghorn.config.file_marks import mark
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.schema.app import AppConfig

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

Edit = Callable[["CommentedMap"], None]


class NoConfigFile(ConfigError):
    """The server runs without a config file: there is nothing to edit."""


class _RoundTrip(Protocol):
    """What is used here of ruamel's ``YAML`` (whose own methods leave parameters unannotated)."""

    def load(self, stream: str) -> object: ...

    def dump(self, data: CommentedMap, stream: io.StringIO) -> object: ...


def _yaml() -> _RoundTrip:
    from ruamel.yaml import YAML  # ruamel: loaded by the first config edit, not at every start

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def read_document(path: Path) -> CommentedMap:
    """The config file as a round-trip document (blocking)."""
    from ruamel.yaml.comments import (
        CommentedMap,
    )  # ruamel: loaded by the first config edit, not at every start
    from ruamel.yaml.error import YAMLError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    try:
        doc = _yaml().load(text) if text.strip() else None
    except YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    if doc is None:
        return CommentedMap()
    if not isinstance(doc, CommentedMap):
        raise ConfigError(f"{path}: the top level must be a mapping")
    return doc


def _write_candidate(path: Path, doc: CommentedMap) -> Path:
    buffer = io.StringIO()
    _yaml().dump(doc, buffer)
    text = mark(buffer.getvalue())
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            os.chmod(name, path.stat().st_mode & 0o777)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return Path(name)


def _sync_folder(folder: Path) -> None:
    """fsync the folder, so the rename itself survives a crash (the file's data already
    did: it was fsynced before the rename)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _source(holder: ConfigHolder) -> Path:
    """The file to edit: the config's, or on a server started without one the file it may
    create (``first_run_path``, in its data dir), which need not exist yet."""
    if holder.source_path is not None:
        return holder.source_path
    if holder.first_run_path is None:
        raise NoConfigFile("the server runs without a config file (start it with --config)")
    return holder.first_run_path


async def validate_edit(holder: ConfigHolder, edit: Edit) -> AppConfig:
    """The config the edited file would load as (nothing is written); `ConfigError` if it
    is invalid."""
    path = _source(holder)

    def run() -> AppConfig:
        doc = read_document(path)
        edit(doc)
        candidate = _write_candidate(path, doc)
        try:
            return holder.check_file(candidate)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(candidate)

    return await asyncio.to_thread(run)


async def apply_edit(holder: ConfigHolder, edit: Edit) -> AppConfig:
    """Edit, validate and atomically replace the config file, then reload it. An invalid
    result raises `ConfigError` and leaves the file untouched."""
    path = _source(holder)

    def run() -> AppConfig:
        doc = read_document(path)
        edit(doc)
        candidate = _write_candidate(path, doc)
        try:
            config = holder.check_file(candidate)
            os.replace(candidate, path)
            _sync_folder(path.parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(candidate)
            raise
        return config

    async with holder.edit_lock:
        config = await asyncio.to_thread(run)
        if holder.source_path is None:  # the first save on a server without a config file
            holder.adopt(path)
        await holder.reload()
    return config
