"""The fence a run checks before it writes (scale-out): the executor's view of the leases
that cluster/leases.py keeps. A process without a cluster has no fence."""

from __future__ import annotations

from typing import Protocol

from pronghorn.runtime.engine.jobs import Job


class LeaseLost(Exception):
    """This replica no longer holds the run's lease: it must stop without writing."""


class RunFence(Protocol):
    """Who holds claimed runs' leases, and the check that one is still held."""

    @property
    def owner(self) -> str: ...

    async def check(self, job: Job) -> None:
        """Raise `LeaseLost` when this replica no longer holds `job`'s lease."""
        ...
