"""A bare in-memory `Job` (a run record, its assistant's record, the default config), for
unit tests of what holds or reads jobs without executing them."""

from __future__ import annotations

from datetime import UTC, datetime

from pronghorn.config.schema.app import AppConfig
from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.persistence.records.runs import run_record
from pronghorn.persistence.repos.runs import new_run_row
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.run_request import RunCreate


def bare_job(
    run_id: str = "r1",
    thread_id: str = "t1",
    *,
    config: AppConfig | None = None,
    owner_id: str | None = None,
) -> Job:
    """A pending run of assistant `a` (graph `g`) on `thread_id`, as a process holds it."""
    run = run_record(
        new_run_row(
            run_id=run_id,
            thread_id=thread_id,
            assistant_id="a",
            kwargs={},
            metadata={},
            multitask_strategy="reject",
            temporary=False,
            owner=None,
        )
    )
    assistant = AssistantRecord(
        assistant_id="a",
        graph_id="g",
        config={},
        context={},
        metadata={},
        name="a",
        description=None,
        version=1,
        created_at=datetime.now(UTC),
        updated_at=None,
        owner_id=None,
    )
    job = Job(
        run=run,
        request=RunCreate.model_validate({"assistant_id": "a"}),
        assistant=assistant,
        config=config or AppConfig(),
    )
    if owner_id is not None:
        job.owner_id = owner_id
    return job
