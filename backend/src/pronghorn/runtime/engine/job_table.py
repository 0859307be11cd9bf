"""The runs this process holds in memory, shared by the run manager (which adds and
removes them) and the executor (which asks whether a thread has another run to come)."""

from __future__ import annotations

from collections.abc import Iterator

from pronghorn.runtime.engine.jobs import Job


class JobTable:
    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        # The same jobs by thread: accepting a run asks for its thread's, and scanning every
        # job instead made each accept cost as much as the runs already held (2,000 streams).
        self._by_thread: dict[str, dict[str, Job]] = {}

    def get(self, run_id: str) -> Job | None:
        return self._jobs.get(run_id)

    def add(self, job: Job) -> None:
        self._jobs[job.run_id] = job
        self._by_thread.setdefault(job.thread_id, {})[job.run_id] = job

    def remove(self, run_id: str) -> None:
        job = self._jobs.pop(run_id, None)
        if job is None:
            return
        of_thread = self._by_thread.get(job.thread_id)
        if of_thread is not None:
            of_thread.pop(run_id, None)
            if not of_thread:
                del self._by_thread[job.thread_id]

    def snapshot(self) -> list[Job]:
        """A copy, safe to iterate from the database thread: list() copies the dict in one
        step under the GIL, so the event loop's changes cannot interleave."""
        return list(self._jobs.values())

    def __len__(self) -> int:
        return len(self._jobs)

    def __iter__(self) -> Iterator[Job]:
        return iter(self.snapshot())

    def of_thread(self, thread_id: str) -> list[Job]:
        """A copy, safe from the database thread for the reason `snapshot` is."""
        return list(self._by_thread.get(thread_id, {}).values())

    def has_queued(self, thread_id: str, run_id: str) -> bool:
        """Whether another run of the thread is still to come. A run that is already in its
        final step (`finishing`) does not count: when two runs of a thread settle together
        (say both interrupted by one cancel, their settle units in one commit group), each
        would otherwise see the other and both would leave the thread `busy` for good."""
        return any(j.run_id != run_id and j.phase != "finishing" for j in self.of_thread(thread_id))
