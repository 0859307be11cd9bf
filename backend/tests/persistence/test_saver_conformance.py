"""LangGraph's own checkpoint conformance suite (`langgraph-checkpoint-conformance`) on the
savers Pronghorn opens: every capability, the history rewrites included, detected and
passed, on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import validate
from langgraph.checkpoint.conformance.capabilities import Capability
from langgraph.checkpoint.conformance.initializer import RegisteredCheckpointer

from pronghorn.config.schema.app import StoreConfig
from pronghorn.persistence.db import Database
from pronghorn.runtime.checkpoints.checkpoint import open_persistence


async def test_the_saver_passes_langgraphs_conformance_suite(db: Database) -> None:
    async def saver() -> AsyncGenerator[BaseCheckpointSaver[str], None]:
        async with open_persistence(db, StoreConfig()) as persistence:
            yield persistence.checkpointer

    # Registered by hand, not with the package's decorator (which fills a module registry).
    kind = "sqlite" if db.is_sqlite else "postgres"
    report = await validate(RegisteredCheckpointer(name=f"pronghorn-{kind}", factory=saver))
    outcome = {name: (r.detected, r.passed, r.failures) for name, r in report.results.items()}
    assert outcome == {c.value: (True, True, []) for c in Capability}, outcome
    # each capability ran its tests (none skipped)
    assert all(r.tests_passed > 0 and r.tests_skipped == 0 for r in report.results.values())
