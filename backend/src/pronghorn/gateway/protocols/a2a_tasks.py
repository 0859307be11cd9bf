"""A2A tasks as views of runs (A2A 0.3 types, from the a2a-sdk's v0.3 models).

A task is the run a message started (task id = that run's id; `contextId` = its thread),
plus the runs that resumed it after `input-required` (their metadata names the task in
`a2a_task_id`). Nothing is stored besides the runs: the task's state is its newest run's,

    pending → submitted, running → working, success → completed (input-required when the
    run stopped on an interrupt), error | timeout → failed, interrupted → canceled,

so a task read from any replica, after a restart, is the same; terminal states are final
because finished runs are. An `input-required` task has no run going; cancelling it is
noted in its thread's metadata (`a2a_canceled_tasks`).

Out: the answer's text as the `answer` artifact, the state's `structured_response` as a
data part, files the agent presented (`artifacts` in its state) as file parts pointing at
the thread's artifact download URL.
"""

from __future__ import annotations

import mimetypes
import posixpath
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import cast

import orjson
from a2a.compat.v0_3 import types as a2a
from pydantic import BaseModel

from pronghorn.runtime.services import agent_calls as calls
from pronghorn.runtime.services import agent_output as output
from pronghorn.runtime.wiring.app_runtime import AppRuntime

TASK_KEY = "a2a_task_id"
CANCELED_KEY = "a2a_canceled_tasks"  # thread metadata: input-required tasks cancelled
TERMINAL = frozenset({a2a.TaskState.completed, a2a.TaskState.canceled, a2a.TaskState.failed})
_RUN_STATES = {
    "pending": a2a.TaskState.submitted,
    "running": a2a.TaskState.working,
    "success": a2a.TaskState.completed,
    "error": a2a.TaskState.failed,
    "timeout": a2a.TaskState.failed,
    "interrupted": a2a.TaskState.canceled,
}


def task_of_run(run: Mapping[str, object]) -> str:
    """The task a run belongs to."""
    metadata = run.get("metadata")
    task = cast(dict[str, object], metadata).get(TASK_KEY) if isinstance(metadata, dict) else None
    return str(task or run["run_id"])


def newest_run(runs: Sequence[Mapping[str, object]], task_id: str) -> Mapping[str, object] | None:
    """The task's current run among a thread's runs (newest first)."""
    for run in runs:
        if task_of_run(run) == task_id:
            return run
    return None


def text_part(text: str) -> a2a.Part:
    return a2a.Part(root=a2a.TextPart(text=text))


def data_part(data: Mapping[str, object]) -> a2a.Part:
    return a2a.Part(root=a2a.DataPart(data=dict(data)))


def agent_message(task_id: str, context_id: str, parts: list[a2a.Part], key: str) -> a2a.Message:
    return a2a.Message(
        role=a2a.Role.agent,
        parts=parts,
        message_id=f"{task_id}-{key}",
        task_id=task_id,
        context_id=context_id,
    )


def interrupt_parts(value: object) -> list[a2a.Part]:
    if isinstance(value, str):
        return [text_part(value)]
    if isinstance(value, dict):
        data = cast(dict[str, object], value)  # an interrupt's JSON object
        question = data.get("question")
        parts = [text_part(question)] if isinstance(question, str) else []
        return [*parts, data_part(data)]
    return [text_part(orjson.dumps(value).decode())]


def file_parts(thread_id: str, paths: object, base_url: str) -> list[a2a.Part]:
    if not isinstance(paths, list):
        return []
    out: list[a2a.Part] = []
    for path in cast(list[object], paths):
        if not isinstance(path, str) or not path.startswith("/"):
            continue
        mime, _ = mimetypes.guess_type(path)
        uri = f"{base_url}/api/threads/{thread_id}/artifacts{path}"
        file = a2a.FileWithUri(uri=uri, name=posixpath.basename(path), mime_type=mime)
        out.append(a2a.Part(root=a2a.FilePart(file=file)))
    return out


def artifacts_of(
    run_id: str, thread_id: str, values: Mapping[str, object], base_url: str
) -> list[a2a.Artifact]:
    out: list[a2a.Artifact] = []
    answer = output.last_answer(values)
    if answer:
        out.append(answer_artifact(run_id, [text_part(answer)]))
    structured = values.get("structured_response")
    if isinstance(structured, dict):
        out.append(
            a2a.Artifact(
                artifact_id=f"{run_id}-data",
                name="structured_response",
                parts=[data_part(cast(dict[str, object], structured))],
            )
        )
    files = file_parts(thread_id, values.get("artifacts"), base_url)
    if files:
        out.append(a2a.Artifact(artifact_id=f"{run_id}-files", name="files", parts=files))
    return out


def answer_artifact(run_id: str, parts: list[a2a.Part]) -> a2a.Artifact:
    return a2a.Artifact(artifact_id=f"{run_id}-answer", name="answer", parts=parts)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def _canceled(metadata: Mapping[str, object]) -> list[str]:
    found = metadata.get(CANCELED_KEY)
    return [str(i) for i in cast(list[object], found)] if isinstance(found, list) else []


def state_of(run: Mapping[str, object], waiting: bool) -> a2a.TaskState:
    state = _RUN_STATES.get(str(run["status"]), a2a.TaskState.unknown)
    if state == a2a.TaskState.completed and waiting:
        return a2a.TaskState.input_required
    return state


async def build_task(
    runtime: AppRuntime,
    task_id: str,
    run: Mapping[str, object],
    *,
    base_url: str,
    history_length: int | None = None,
) -> a2a.Task:
    """The task whose current run is `run` (the caller checked it may read it)."""
    thread_id = str(run["thread_id"])
    thread = await calls.thread_view(runtime, thread_id)
    values, interrupts = thread.values, thread.interrupts
    newest = (await calls.thread_runs(runtime, thread_id, limit=1) or [run])[0]
    latest_on_thread = newest["run_id"] == run["run_id"]
    waiting = bool(interrupts) and latest_on_thread
    state = state_of(run, waiting)
    if state == a2a.TaskState.input_required and task_id in _canceled(thread.metadata):
        state = a2a.TaskState.canceled
    message: a2a.Message | None = None
    artifacts: list[a2a.Artifact] | None = None
    if state == a2a.TaskState.input_required:
        message = agent_message(task_id, thread_id, interrupt_parts(interrupts[0]), "input")
    elif state == a2a.TaskState.failed:
        found = run.get("error")
        error = cast(dict[str, object], found) if isinstance(found, dict) else {}
        text = f"{error.get('error', 'Error')}: {error.get('message', 'the run failed')}"
        message = agent_message(task_id, thread_id, [text_part(text)], "error")
    elif state == a2a.TaskState.completed and latest_on_thread:
        artifacts = artifacts_of(str(run["run_id"]), thread_id, values, base_url) or None
    history: list[a2a.Message] | None = None
    if history_length:
        history = thread_history(task_id, thread_id, values)[-history_length:]
    return a2a.Task(
        id=task_id,
        context_id=thread_id,
        status=a2a.TaskStatus(state=state, message=message, timestamp=now_iso()),
        artifacts=artifacts,
        history=history,
        metadata={"run_id": run["run_id"], "assistant_id": run["assistant_id"]},
    )


def thread_history(task_id: str, thread_id: str, values: Mapping[str, object]) -> list[a2a.Message]:
    messages = values.get("messages")
    if not isinstance(messages, list):
        return []
    out: list[a2a.Message] = []
    for i, item in enumerate(cast(list[object], messages)):
        if not isinstance(item, dict):
            continue
        msg = cast(dict[str, object], item)  # a message as the state stores it
        kind = msg.get("type")
        if kind not in ("human", "ai"):
            continue
        text = output.text_of(msg.get("content"))
        if not text:
            continue
        out.append(
            a2a.Message(
                role=a2a.Role.user if kind == "human" else a2a.Role.agent,
                parts=[text_part(text)],
                message_id=str(msg.get("id") or f"{thread_id}-{i}"),
                task_id=task_id,
                context_id=thread_id,
            )
        )
    return out


def dump(model: BaseModel) -> dict[str, object]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)
