"""The settings pages' writer replaces config.yaml atomically and marks its first and last
line; the loader refuses a marked file that was cut short (even where the cut leaves valid,
smaller YAML), at start and at a reload (the running config is kept)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pronghorn.config.errors import ConfigError
from pronghorn.config.file_edit import apply_edit
from pronghorn.config.file_marks import HEAD, TAIL
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config

HAND_WRITTEN = (
    "# my settings\n"
    "runs:\n  max_concurrency: 8\n"
    "server:\n  port: 2026\n"
    "sandbox:\n  command_timeout_s: 30\n"
)


def _holder(path: Path) -> ConfigHolder:
    return ConfigHolder(load_config(path, {}, None), {})


async def _saved(tmp_path: Path) -> tuple[Path, ConfigHolder]:
    path = tmp_path / "config.yaml"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    holder = _holder(path)

    def edit(doc: dict) -> None:  # type: ignore[type-arg]
        doc["runs"]["max_concurrency"] = 3

    await apply_edit(holder, edit)
    return path, holder


async def test_a_saved_file_is_marked_and_loads(tmp_path: Path) -> None:
    path, holder = await _saved(tmp_path)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == HEAD and lines[-1] == TAIL
    assert "# my settings" in text  # comments are kept
    assert holder.current.runs.max_concurrency == 3
    assert load_config(path, {}, None).config.sandbox.command_timeout_s == 30
    # No temporary file is left beside it.
    assert sorted(os.listdir(tmp_path)) == ["config.yaml"]
    # Saving again does not stack the marks.
    await apply_edit(holder, lambda doc: doc["runs"].__setitem__("max_concurrency", 4))
    again = path.read_text(encoding="utf-8").splitlines()
    assert again.count(HEAD) == 1 and again.count(TAIL) == 1 and again[-1] == TAIL


async def test_a_cut_file_is_refused_at_start_and_at_reload(tmp_path: Path) -> None:
    path, holder = await _saved(tmp_path)
    whole = path.read_text(encoding="utf-8")
    # Cut just before "sandbox:": what is left is valid YAML and a valid, smaller config.
    cut = whole[: whole.index("sandbox:")]
    path.write_text(cut, encoding="utf-8")
    with pytest.raises(ConfigError, match="cut short"):
        load_config(path, {}, None)
    assert not await holder.reload()
    assert holder.current.sandbox.command_timeout_s == 30  # the last good config is kept
    assert "cut short" in (holder.status()["last_error"] or "")
    # Every other cut is refused too (or is not YAML at all).
    for size in range(len(HEAD) + 1, len(whole) - len(TAIL) - 1, 7):
        path.write_text(whole[:size], encoding="utf-8")
        with pytest.raises(ConfigError):
            load_config(path, {}, None)
    # The whole file (trailing blank lines or not) loads again.
    path.write_text(whole + "\n\n", encoding="utf-8")
    await holder.reload()
    assert holder.status()["last_error"] is None and holder.current.runs.max_concurrency == 3
    assert load_config(path, {}, None).config.runs.max_concurrency == 3


def test_a_hand_written_file_is_read_as_is(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(HAND_WRITTEN[: HAND_WRITTEN.index("sandbox:")], encoding="utf-8")
    assert load_config(path, {}, None).config.runs.max_concurrency == 8


async def test_an_invalid_edit_leaves_the_file_untouched(tmp_path: Path) -> None:
    path, holder = await _saved(tmp_path)
    before = path.read_text(encoding="utf-8")

    def bad(doc: dict) -> None:  # type: ignore[type-arg]
        doc["runs"]["max_concurrency"] = "many"

    with pytest.raises(ConfigError):
        await apply_edit(holder, bad)
    assert path.read_text(encoding="utf-8") == before
    assert sorted(os.listdir(tmp_path)) == ["config.yaml"]
