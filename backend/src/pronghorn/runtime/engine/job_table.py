"""The runs this process holds in memory, shared by the run manager (which adds and
removes them) and the executor (which asks whether a thread has another run to come)."""

from __future__ import annotations

from collections.abc import Iterator

from pronghorn.runtime.engine.jobs import Job


class JobTable:
    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}

    def get(self, run_id: str) -> Job | None:
        return self._jobs.get(run_id)

    def add(self, job: Job) -> None:
        self._jobs[job.run_id] = job

    def remove(self, run_id: str) -> None:
        self._jobs.pop(run_id, None)

    def snapshot(self) -> list[Job]:
        """A copy, safe to iterate from the database thread: list() copies the dict in one
        step under the GIL, so the event loop's changes cannot interleave."""
        return list(self._jobs.values())

    def __len__(self) -> int:
        return len(self._jobs)

    def __iter__(self) -> Iterator[Job]:
        return iter(self.snapshot())

    def of_thread(self, thread_id: str) -> list[Job]:
        return [j for j in self.snapshot() if j.thread_id == thread_id]

    def has_queued(self, thread_id: str, run_id: str) -> bool:
        """Whether another run of the thread is still to come. A run that is already in its
        final step (`finishing`) does not count: when two runs of a thread settle together
        (say both interrupted by one cancel, their settle units in one commit group), each
        would otherwise see the other and both would leave the thread `busy` for good."""
        return any(j.run_id != run_id and j.phase != "finishing" for j in self.of_thread(thread_id))
