"""What a start logs at INFO: the gateway's own lines, not a dependency's chatter."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from pronghorn.gateway.logs import configure_logging

QUIET = ("httpx", "httpcore", "aiosqlite", "watchfiles", "sse_starlette", "alembic.runtime.plugins")


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in QUIET}
    try:
        yield
    finally:
        root.handlers, root.level = handlers, level
        for name, old in levels.items():
            logging.getLogger(name).setLevel(old)


def test_info_logging_keeps_dependency_chatter_out(restore_logging: None) -> None:
    configure_logging("INFO")
    assert logging.getLogger("pronghorn.gateway").isEnabledFor(logging.INFO)
    assert logging.getLogger("alembic.runtime.migration").isEnabledFor(logging.INFO)
    for name in QUIET:
        assert not logging.getLogger(name).isEnabledFor(logging.INFO), name
        assert logging.getLogger(name).isEnabledFor(logging.WARNING), name
