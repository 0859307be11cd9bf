"""The in-memory table of this process's runs, looked up by thread."""

from __future__ import annotations

from pronghorn.runtime.engine.job_table import JobTable
from support.jobs import bare_job as job


def test_a_thread_gets_its_own_runs_in_the_order_they_came() -> None:
    table = JobTable()
    a1, b1, a2 = job("r1", "a"), job("r2", "b"), job("r3", "a")
    for j in (a1, b1, a2):
        table.add(j)
    assert table.of_thread("a") == [a1, a2]
    assert table.of_thread("b") == [b1]
    assert table.of_thread("c") == []
    assert table.has_queued("a", "r1")  # r3 is still to come
    assert not table.has_queued("b", "r2")


def test_a_removed_run_leaves_its_thread() -> None:
    table = JobTable()
    a1, a2 = job("r1", "a"), job("r2", "a")
    table.add(a1)
    table.add(a2)
    table.remove("r1")
    table.remove("r1")  # twice is harmless
    assert table.of_thread("a") == [a2]
    assert table.get("r1") is None
    table.remove("r2")
    assert table.of_thread("a") == [] and len(table) == 0
    table.add(a1)  # a thread emptied and used again
    assert table.of_thread("a") == [a1]
