"""A run's live state while this process holds it: its phase, status and cancel request,
typed, changed only through the transitions below (by the run engine and the executor);
everyone else reads it, or takes a `RunSnapshot`.

Phases: waiting → starting → streaming → finishing. Only the waiting task and the streaming
task are ever cancelled: a cancel never lands inside a database call.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal, TypedDict, get_args

from pronghorn.persistence.repos.run_units import StartMark

RunPhase = Literal["waiting", "starting", "streaming", "finishing"]
RunStatus = Literal["pending", "running", "success", "error", "interrupted", "timeout"]
CancelAction = Literal["interrupt", "rollback", "shutdown", "lease_lost"]
"""Why a run was asked to stop: a client (`interrupt`, `rollback`: its checkpoints and row
go), the server stopping (`shutdown`), or another replica taking it over (`lease_lost`)."""


class RunError(TypedDict):
    """How a run failed, as its `error` event, its row and /wait give it."""

    error: str  # a name: the exception's type, or a code (TimeoutError, ServerRestart...)
    message: str


FINAL_STATUSES: frozenset[RunStatus] = frozenset({"success", "error", "interrupted", "timeout"})


def cancel_action(value: str) -> CancelAction:
    """`value` as a cancel action; ValueError when it is none."""
    for action in get_args(CancelAction):
        if action == value:
            return action
    raise ValueError(f"unknown cancel action {value!r}")


def run_status(value: str) -> RunStatus:
    """A stored status as a `RunStatus`; ValueError when it is none."""
    for status in get_args(RunStatus):
        if status == value:
            return status
    raise ValueError(f"unknown run status {value!r}")


@dataclass(frozen=True)
class RunSnapshot:
    """The state of a run at one moment, for readers."""

    phase: RunPhase
    status: RunStatus
    cancel_action: CancelAction | None
    started: bool
    lease_lost: bool
    output: object  # JSON, as /wait answers it
    error: RunError | None


class RunState:
    """The live state of one run (see the module doc)."""

    def __init__(self) -> None:
        self._phase: RunPhase = "waiting"
        self._status: RunStatus = "pending"
        self._cancel: CancelAction | None = None
        # The run task has begun waiting: from then on cancelling it lands where it waits.
        # A task cancelled before its first step never runs a line of its body (no
        # `finally`), so an earlier cancel only records the action, which it checks first.
        self._waiting = False
        self._started = False
        self._lease_lost = False
        # Whether another run of its thread was unfinished when this one settled (then that
        # run may be claimable now); True until the settle has looked.
        self._more_on_thread = True
        self._output: object = None  # what /wait and /join return: JSON, any shape
        self._error: RunError | None = None
        self.task: asyncio.Task[None] | None = None  # the run task (waits, then executes)
        self.stream_task: asyncio.Task[None] | None = None
        # The `running` write (made with the run's next events, or dropped by its settle)
        self.start_mark: StartMark | None = None

    # -- reads ----------------------------------------------------------------------------
    @property
    def phase(self) -> RunPhase:
        return self._phase

    @property
    def status(self) -> RunStatus:
        return self._status

    @property
    def cancel_action(self) -> CancelAction | None:
        return self._cancel

    @property
    def started(self) -> bool:
        return self._started

    @property
    def lease_lost(self) -> bool:
        return self._lease_lost

    @property
    def more_on_thread(self) -> bool:
        return self._more_on_thread

    @property
    def output(self) -> object:
        return self._output

    @property
    def error(self) -> RunError | None:
        return self._error

    def snapshot(self) -> RunSnapshot:
        return RunSnapshot(
            phase=self._phase,
            status=self._status,
            cancel_action=self._cancel,
            started=self._started,
            lease_lost=self._lease_lost,
            output=self._output,
            error=self._error,
        )

    # -- transitions ------------------------------------------------------------------------
    def interrupt(self, action: CancelAction) -> None:
        """Ask the run to stop; the first action asked for wins. Waiting, its task is
        cancelled; streaming, its stream; starting, the executor checks the action before
        it streams; finishing, it is too late."""
        if self._cancel is None:
            self._cancel = action
        if self._phase == "waiting" and self.task is not None and self._waiting:
            self.task.cancel()
        elif self._phase == "streaming" and self.stream_task is not None:
            self.stream_task.cancel()

    def begin_waiting(self) -> None:
        """The run task has begun: a cancel may now interrupt its waits."""
        self._waiting = True

    def begin_starting(self) -> None:
        """It has its turn and its slots: the executor takes it from here."""
        self._phase = "starting"

    def begin_running(self, start_mark: StartMark) -> None:
        """Execution begins (`start_mark`: the write of its `running` status)."""
        self.start_mark = start_mark
        self._started = True
        self._status = "running"

    def begin_streaming(self, stream_task: asyncio.Task[None]) -> None:
        self.stream_task = stream_task
        self._phase = "streaming"

    def begin_finishing(self) -> None:
        self._phase = "finishing"

    def stream_ended(self) -> None:
        self.stream_task = None

    def saw_others(self, more: bool) -> None:
        """The settle looked: whether another run of the thread was still to finish."""
        self._more_on_thread = more

    def lose_lease(self) -> None:
        """Another replica owns the run now: nothing more is written for it here."""
        self._lease_lost = True

    def fenced(self, error: RunError) -> None:
        """It ends here without writing anything (its lease was lost)."""
        self._phase = "finishing"
        self._error = error
        self._output = {"__error__": error}

    def settled(self, status: RunStatus, error: RunError | None, output: object) -> None:
        """Its end is recorded: `status` with `error`, and what /wait answers."""
        self._status = status
        self._error = error
        self._output = output

    def ended_elsewhere(self, status: RunStatus, output: object) -> None:
        """A run another replica executed has ended (a follower read its outcome)."""
        self._status = status
        self._output = output

    def unreadable(self, output: object) -> None:
        """A follower could not read the run's outcome: what /wait answers instead."""
        self._output = output
