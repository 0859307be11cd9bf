"""RunState: a run's phase, status and cancel request change only through its transitions."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from pronghorn.persistence.repos.run_units import StartMark
from pronghorn.runtime.engine.run_state import RunState, cancel_action, run_status


def test_the_first_cancel_action_wins_and_a_snapshot_does_not_move() -> None:
    state = RunState()
    before = state.snapshot()
    state.interrupt("rollback")
    state.interrupt("interrupt")
    assert state.cancel_action == "rollback"
    assert before.cancel_action is None and before.phase == "waiting"


async def test_a_cancel_lands_where_the_run_waits_or_streams_and_never_while_it_starts() -> None:
    never = asyncio.Event()

    async def idle() -> None:  # a run's task: returns nothing
        await never.wait()

    state = RunState()
    state.task = task = asyncio.create_task(idle())
    state.interrupt("interrupt")  # its task has not begun waiting: only recorded
    await asyncio.sleep(0)
    assert not task.cancelled()
    state.begin_waiting()
    state.interrupt("interrupt")
    with pytest.raises(asyncio.CancelledError):
        await task

    state = RunState()
    state.begin_starting()
    stream = asyncio.create_task(idle())
    state.interrupt("shutdown")  # starting: the executor checks the action itself
    state.begin_streaming(stream)
    assert state.phase == "streaming" and not stream.done()
    state.interrupt("interrupt")
    with pytest.raises(asyncio.CancelledError):
        await stream
    assert state.cancel_action == "shutdown"


async def test_settling_records_status_error_and_output() -> None:
    state = RunState()

    began = datetime.now(UTC)
    state.begin_running(StartMark("r", began))
    assert state.status == "running" and state.started
    mark = state.start_mark
    assert mark is not None and mark.drop() == began and mark.dropped
    state.begin_finishing()
    state.settled("error", {"error": "Boom", "message": "x"}, {"__error__": "x"})
    snap = state.snapshot()
    assert (snap.status, snap.phase, snap.error, snap.output) == (
        "error",
        "finishing",
        {"error": "Boom", "message": "x"},
        {"__error__": "x"},
    )


def test_strings_from_outside_become_typed_values_or_are_refused() -> None:
    assert cancel_action("rollback") == "rollback"
    assert run_status("timeout") == "timeout"
    with pytest.raises(ValueError, match="unknown cancel action"):
        cancel_action("explode")
    with pytest.raises(ValueError, match="unknown run status"):
        run_status("done")
