"""What the executor runs around each run, given to it when it is built: callback handlers
(metrics, traces, LangSmith/Langfuse), scopes around its execution (its trace span) and
watchers around its graph (the workspace-changes recorder)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass

from langchain_core.callbacks import BaseCallbackHandler

from pronghorn.runtime.engine.jobs import Job

CallbackFactory = Callable[[Job], list[BaseCallbackHandler]]
RunScope = Callable[[Job], AbstractContextManager[None]]
RunWatcher = Callable[[Job], AbstractAsyncContextManager[None]]


@dataclass(frozen=True)
class RunHooks:
    # Called with the job as it starts streaming: the handlers it streams with.
    callbacks: tuple[CallbackFactory, ...] = ()
    # Entered around the run's execution.
    scopes: tuple[RunScope, ...] = ()
    # Entered before the run's graph starts, left once it has ended, before the run settles.
    watchers: tuple[RunWatcher, ...] = ()

    def __add__(self, other: RunHooks) -> RunHooks:
        return RunHooks(
            self.callbacks + other.callbacks,
            self.scopes + other.scopes,
            self.watchers + other.watchers,
        )
