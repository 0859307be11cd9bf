"""Hot reload with the real watcher and real file writes."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import pytest

from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.config.schema.app import AppConfig

log = logging.getLogger(__name__)
BOUND_S = 5.0  # generous: the watcher normally reacts within ~0.1 s

BASE = "runs:\n  max_concurrency: 8\nserver:\n  port: 2026\n"


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


async def write_atomic(path: Path, text: str) -> None:
    """Write like an editor does: a new file renamed over the old one."""
    await asyncio.to_thread(_replace, path, text)


async def write_in_place(path: Path, text: str) -> None:
    await asyncio.to_thread(path.write_text, text, encoding="utf-8")


async def until(predicate: Callable[[], bool], what: str) -> float:
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > BOUND_S:
            raise AssertionError(f"not within {BOUND_S}s: {what}")
        await asyncio.sleep(0.01)
    elapsed = time.monotonic() - start
    log.info("%s after %.3f s", what, elapsed)
    return elapsed


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(BASE, encoding="utf-8")
    return path


@asynccontextmanager
async def watching(path: Path, env: dict[str, str] | None = None) -> AsyncIterator[ConfigHolder]:
    env = {} if env is None else env
    holder = ConfigHolder(load_config(path, env, None), env)
    stop = asyncio.Event()
    task = asyncio.create_task(holder.watch(stop))
    await asyncio.wait_for(holder.watching.wait(), 30)  # the first write is then seen
    try:
        yield holder
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


async def test_valid_change_is_live_quickly(config_file: Path) -> None:
    async with watching(config_file) as holder:
        assert holder.current.runs.max_concurrency == 8
        before = holder.status()["version_hash"]
        await write_in_place(config_file, BASE.replace("8", "3"))  # in-place write
        elapsed = await until(lambda: holder.current.runs.max_concurrency == 3, "in-place write")
        assert elapsed < BOUND_S
        await write_atomic(config_file, BASE.replace("8", "5"))  # rename over
        await until(lambda: holder.current.runs.max_concurrency == 5, "rename-over write")
        status = holder.status()
        assert status["version_hash"] != before
        assert status["last_error"] is None
        assert status["restart_required"] == []
        assert status["source_path"] == str(config_file)
        offset = datetime.fromisoformat(status["loaded_at"]).utcoffset()
    assert offset is not None and offset.total_seconds() == 0


async def test_an_edit_before_the_watcher_started_is_applied(config_file: Path) -> None:
    """The app loads its config, then starts the watcher: an edit in between (an operator
    quick off the mark, a test writing right after startup) has no event of its own."""
    holder = ConfigHolder(load_config(config_file, {}, None), {})
    await write_in_place(config_file, BASE.replace("8", "4"))
    stop = asyncio.Event()
    task = asyncio.create_task(holder.watch(stop))
    try:
        await until(lambda: holder.current.runs.max_concurrency == 4, "the earlier edit")
        await write_in_place(config_file, "runs: [broken")
        await until(lambda: holder.status()["last_error"] is not None, "the broken file")
        assert holder.current.runs.max_concurrency == 4
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


async def test_invalid_yaml_keeps_old_config_then_fix_clears_error(config_file: Path) -> None:
    async with watching(config_file) as holder:
        good = holder.current
        await write_atomic(config_file, "runs:\n  max_concurrency: [1\n")
        await until(lambda: holder.status()["last_error"] is not None, "YAML error reported")
        assert "YAML syntax error at line" in holder.status()["last_error"]
        assert holder.current is good
        await write_atomic(config_file, BASE.replace("8", "2"))
        await until(lambda: holder.status()["last_error"] is None, "error cleared")
        assert holder.current.runs.max_concurrency == 2


async def test_invalid_value_keeps_old_config_and_reports(config_file: Path) -> None:
    async with watching(config_file) as holder:
        good = holder.current
        await write_atomic(config_file, "runs:\n  max_concurrency: 0\n  timeot_s: 3\n")
        await until(lambda: holder.status()["last_error"] is not None, "invalid value reported")
        error = holder.status()["last_error"]
        assert "runs.max_concurrency: Input should be greater than or equal to 1" in error
        assert "runs.timeot_s: Extra inputs are not permitted" in error
        assert holder.current is good
        await write_atomic(config_file, BASE)  # back to the running content: a no-op that clears
        await until(lambda: holder.status()["last_error"] is None, "error cleared")
        assert holder.current is good


async def test_startup_only_change_is_reported_not_applied(config_file: Path) -> None:
    async with watching(config_file) as holder:
        await write_atomic(
            config_file,
            "runs:\n  max_concurrency: 4\nserver:\n  port: 9999\nbroker:\n  kind: redis\n",
        )
        await until(lambda: holder.current.runs.max_concurrency == 4, "hot part applied")
        status = holder.status()
        assert status["restart_required"] == ["server.port", "broker.kind"]
        assert holder.current.server.port == 2026  # kept: never half-applied
        assert holder.current.broker.kind == "memory"
        await write_atomic(config_file, BASE.replace("8", "4"))  # revert the startup-only part
        await until(lambda: holder.status()["restart_required"] == [], "restart cleared")


async def test_listeners_are_called(config_file: Path) -> None:
    calls: list[tuple[int, int]] = []
    async_calls: list[AppConfig] = []

    def sync_listener(old: AppConfig, new: AppConfig) -> None:
        calls.append((old.runs.max_concurrency, new.runs.max_concurrency))

    async def async_listener(old: AppConfig, new: AppConfig) -> None:
        await asyncio.sleep(0)
        async_calls.append(new)

    def broken_listener(old: AppConfig, new: AppConfig) -> None:
        raise RuntimeError("listener bug")

    async with watching(config_file) as holder:
        holder.add_listener(broken_listener)  # must not stop the others
        holder.add_listener(sync_listener)
        unsubscribe = holder.add_listener(async_listener)
        await write_atomic(config_file, BASE.replace("8", "6"))
        await until(lambda: calls == [(8, 6)] and len(async_calls) == 1, "listeners called")
        assert async_calls[0] is holder.current
        unsubscribe()
        await write_atomic(config_file, BASE.replace("8", "7"))
        await until(lambda: len(calls) == 2, "second change")
        assert len(async_calls) == 1


async def test_reload_without_changes_is_a_noop(config_file: Path) -> None:
    holder = ConfigHolder(load_config(config_file, {}), {})
    seen: list[AppConfig] = []
    holder.add_listener(lambda old, new: seen.append(new))
    snapshot = holder.current
    await write_in_place(config_file, "# a comment only changes nothing\n" + BASE)
    assert await holder.reload() is True
    assert holder.current is snapshot
    assert seen == []


async def test_secrets_never_reach_the_log(
    config_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env = {"KEY": "sk-super-secret-value"}
    await write_in_place(config_file, BASE + "models:\n  - name: m\n    api_key: ${KEY}\n")
    holder = ConfigHolder(load_config(config_file, env), env)
    with caplog.at_level(logging.DEBUG, logger="pronghorn.config"):
        await write_in_place(
            config_file, BASE + "models:\n  - name: m\n    api_key: ${KEY}\n    x: 1\n"
        )
        assert await holder.reload() is False
        env["KEY"] = "sk-another-secret"
        await write_in_place(config_file, BASE + "models:\n  - name: m\n    api_key: ${KEY}\n")
        assert await holder.reload() is True
    assert "changed: models[0].api_key" in caplog.text  # the changed key is named ...
    assert "sk-" not in caplog.text  # ... its value never
    assert "sk-" not in str(holder.status())


async def test_watch_without_file_waits_for_stop() -> None:
    holder = ConfigHolder(load_config(None, {}), {})
    stop = asyncio.Event()
    task = asyncio.create_task(holder.watch(stop))
    await asyncio.sleep(0.05)
    assert not task.done()
    stop.set()
    await asyncio.wait_for(task, 1)
    assert holder.status()["source_path"] is None


async def test_deleted_file_keeps_config_and_recreated_file_applies(config_file: Path) -> None:
    async with watching(config_file) as holder:
        await asyncio.to_thread(config_file.unlink)
        await until(lambda: holder.status()["last_error"] is not None, "deletion reported")
        assert holder.current.runs.max_concurrency == 8
        await write_in_place(config_file, BASE.replace("8", "1"))
        await until(lambda: holder.current.runs.max_concurrency == 1, "recreated file applied")
        assert holder.status()["last_error"] is None


async def test_an_empty_file_is_refused_not_read_as_all_defaults(config_file: Path) -> None:
    """What a reload sees mid-way through an in-place save: the file truncated, not yet
    written. `{}` still means "all defaults"."""
    async with watching(config_file) as holder:
        await write_in_place(config_file, "  \n")
        await until(lambda: holder.status()["last_error"] is not None, "the empty file")
        assert "is empty" in holder.status()["last_error"]
        assert holder.current.runs.max_concurrency == 8  # the running config stays
        await write_in_place(config_file, "{}\n")
        await until(lambda: holder.current.runs.max_concurrency != 8, "the explicit defaults")
        assert holder.status()["last_error"] is None


async def test_a_server_started_on_an_empty_file_keeps_it_without_an_error(
    config_file: Path,
) -> None:
    await write_in_place(config_file, "")
    async with watching(config_file) as holder:  # its start reads the file once more
        assert holder.status()["last_error"] is None
        await write_in_place(config_file, BASE)
        await until(lambda: holder.current.runs.max_concurrency == 8, "the first settings")
        await write_in_place(config_file, "")  # from then on, empty is refused
        await until(lambda: holder.status()["last_error"] is not None, "the empty file")
        assert holder.current.runs.max_concurrency == 8


async def test_dotenv_beside_the_config_is_watched_too(config_file: Path) -> None:
    dotenv = config_file.parent / ".env"
    await write_in_place(dotenv, "PRONGHORN_RUNS__TIMEOUT_S=30\n")
    async with watching(config_file) as holder:
        assert holder.current.runs.timeout_s == 30
        await write_atomic(dotenv, "PRONGHORN_RUNS__TIMEOUT_S=45\n")
        await until(lambda: holder.current.runs.timeout_s == 45, ".env change applied")
