"""One turn of a conversation: follow a run the dispatcher started, stream its answer by
editing one message (throttled), then the final answer (split), the files it presented,
or the clarification question it asked.

The run is followed on the broker (the run's own event log), never over HTTP; its outcome
is the job's output once it is done.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from pronghorn.channels import approvals
from pronghorn.channels.edits import EditPump, final_edit
from pronghorn.channels.errors import PlatformError
from pronghorn.channels.files import read_artifact
from pronghorn.channels.render import fit
from pronghorn.channels.transport import Transport
from pronghorn.channels.types import ChannelCounts, Inbound, Sent, Target
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.events.broker import EventBroker
from pronghorn.runtime.services.agent_output import text_of
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import ThreadPaths

log = logging.getLogger("pronghorn.channels")

WORKING = "…"
FAILED = "Sorry, something went wrong while answering. Please try again."
EMPTY = "(no answer)"
TIMED_OUT = "Nobody answered in time, so the tool was not run; the agent carries on without it."

# Finds the in-process Job of a run (the run manager's `active`).
JobLookup = Callable[[str], Job | None]


@dataclass(frozen=True, slots=True)
class Turn:
    job: Job
    target: Target
    paths: ThreadPaths
    artifacts_before: frozenset[str]
    max_file_bytes: int
    origin: Inbound | None = None  # the message that started it


Asked = Literal["approval", "clarification"]  # what a turn ended asking the user, if anything


class StreamText:
    """The answer so far, from `messages` events: text chunks of AI messages only (tool
    results and hidden context are never shown), the latest message's text."""

    def __init__(self) -> None:
        self.by_id: dict[str, str] = {}
        self.current: str | None = None

    def feed(self, data: bytes) -> bool:
        try:
            payload = json.loads(data)
        except ValueError:
            return False
        if not isinstance(payload, list) or not payload:
            return False
        chunk = cast(list[object], payload)[0]
        if not isinstance(chunk, Mapping):
            return False
        msg = cast(Mapping[str, object], chunk)
        if msg.get("type") not in ("AIMessageChunk", "ai"):
            return False
        text = text_of(msg.get("content"))
        if not text:
            return False
        mid = str(msg.get("id") or "")
        full = msg.get("type") == "ai"  # a whole message (not a chunk) replaces the text
        self.by_id[mid] = text if full else self.by_id.get(mid, "") + text
        self.current = mid
        return True

    @property
    def text(self) -> str:
        return self.by_id.get(self.current or "", "")


def final_answer(output: Mapping[str, object]) -> str:
    messages = output.get("messages")
    if isinstance(messages, list):
        for msg in reversed(cast(list[object], messages)):
            if isinstance(msg, Mapping):
                m = cast(Mapping[str, object], msg)
                if m.get("type") == "ai":
                    return text_of(m.get("content")).strip()
                if m.get("type") == "human":
                    break
    return ""


def clarification(output: Mapping[str, object]) -> str | None:
    """The question of a pending `ask_clarification` interrupt, with numbered options."""
    interrupts = output.get("__interrupt__")
    if not isinstance(interrupts, list):
        return None
    for item in cast(list[object], interrupts):
        value = cast(Mapping[str, object], item).get("value") if isinstance(item, Mapping) else None
        if not isinstance(value, Mapping):
            continue
        v = cast(Mapping[str, object], value)
        question = v.get("question")
        if not isinstance(question, str):
            continue
        options = v.get("options")
        lines = [question]
        if isinstance(options, list):
            lines += [f"{i}. {o}" for i, o in enumerate(cast(list[object], options), 1)]
        lines.append("(Reply to answer.)")
        return "\n".join(lines)
    return "The agent is waiting for your input. Reply to continue."


def approval_question(output: Mapping[str, object]) -> str | None:
    """The question of pending tool approvals (channels/approvals.py), if any."""
    interrupts = output.get("__interrupt__")
    if not isinstance(interrupts, list):
        return None
    requests = approvals.requests_of(cast(list[object], interrupts))
    return approvals.question(requests) if requests else None


def options_of(interrupts: Sequence[object]) -> list[str]:
    """The options of a pending clarification (a reply "2" picks the second)."""
    for item in interrupts:
        value = cast(Mapping[str, object], item).get("value") if isinstance(item, Mapping) else None
        if isinstance(value, Mapping):
            opts = cast(Mapping[str, object], value).get("options")
            if isinstance(opts, list):
                return [str(o) for o in cast(list[object], opts)]
    return []


class RunDriver:
    def __init__(self, transport: Transport, broker: EventBroker, counts: ChannelCounts) -> None:
        self.transport = transport
        self.broker = broker
        self.counts = counts

    async def drive(
        self, turn: Turn, asking: Callable[[Asked], None] | None = None
    ) -> Asked | None:
        """Follow the run to its end and reply; a platform failure is logged, never raised.
        What the run ended asking in the chat (a tool approval, a clarification), if any;
        `asking` hears it before the question is posted, so the user's answer, however
        quick, finds it recorded."""
        try:
            return await self._drive(turn, asking)
        except PlatformError as exc:
            self.counts.errors += 1
            log.error(
                "channel reply failed",
                extra={
                    "channel": self.transport.name,
                    "run_id": turn.job.run_id,
                    "error": str(exc),
                },
            )
            return None

    async def after_approval(self, turn: Turn, lookup: JobLookup) -> Turn | None:
        """Wait for the next run on the thread of `turn`, which ended asking for a tool
        approval. The user's answer starts one (the dispatcher follows it): None. The
        approval sweeper's denial after `approvals.timeout_s` starts one nobody else
        follows: the chat is told, and the Turn to follow it is returned."""
        events = self.broker.subscribe_thread(turn.job.thread_id, None)
        async for event in events:
            if event.event != "metadata":
                continue
            try:
                data: object = json.loads(event.data)
            except ValueError:
                continue
            if not isinstance(data, Mapping) or "attempt" not in data:
                continue  # a run's end, not a start
            run_id = str(cast(Mapping[str, object], data).get("run_id") or "")
            if run_id == turn.job.run_id:
                continue
            job = lookup(run_id)
            if job is None or not (job.request.metadata or {}).get("approval_timeout"):
                return None  # the user answered (or another replica runs it)
            await self.transport.send(turn.target, self.transport.render(TIMED_OUT))
            return dataclasses.replace(turn, job=job)
        return None

    async def _drive(self, turn: Turn, asking: Callable[[Asked], None] | None) -> Asked | None:
        t = self.transport
        job = turn.job
        placeholder: Sent | None = await t.send(turn.target, WORKING) if t.supports_edit else None
        stream = StreamText()
        pump = (
            EditPump(t, placeholder, t.edit_interval(turn.target), lambda s: _preview(t, s))
            if placeholder
            else None
        )
        try:
            async for event in self.broker.subscribe(job.run_id, 0):
                if event.event != "messages" or not stream.feed(event.data):
                    continue
                if pump is not None:
                    pump.offer(stream.text)
            await job.done.wait()
        finally:
            if pump is not None:
                await pump.close()
        output = cast(Mapping[str, object], job.output if isinstance(job.output, Mapping) else {})
        if job.error is not None or job.status in ("error", "timeout"):
            answer, asked = FAILED, None
        elif job.status == "interrupted" and "__interrupt__" not in output:
            answer, asked = "Stopped.", None
        elif question := approval_question(output):
            answer, asked = question, "approval"
        elif question := clarification(output):
            answer, asked = question, "clarification"
        else:
            answer, asked = final_answer(output) or EMPTY, None
        if asked is not None and asking is not None:
            asking(asked)
        pieces = fit(answer, t.max_text, t.render)
        if placeholder is not None:
            limited_until = pump.limited_until if pump is not None else 0.0
            await final_edit(t, placeholder, turn.target, pieces[0], not_before=limited_until)
            rest = pieces[1:]
        else:
            rest = pieces
        for piece in rest:
            await t.send(turn.target, piece)
        self.counts.replied += 1
        await self._send_artifacts(turn, output)
        return asked

    async def _send_artifacts(self, turn: Turn, output: Mapping[str, object]) -> None:
        artifacts = output.get("artifacts")
        if not isinstance(artifacts, list):
            return
        for path in cast(list[object], artifacts):
            if not isinstance(path, str) or path in turn.artifacts_before:
                continue
            name = path.rsplit("/", 1)[-1]
            try:
                data = await read_artifact(turn.paths, path, turn.max_file_bytes)
            except SandboxError:
                continue
            if data is None:
                await self.transport.send(turn.target, f"{name} is too large to send here.")
                continue
            await self.transport.upload(turn.target, name, data)
            self.counts.files_out += 1


def _preview(t: Transport, text: str) -> str:
    """A streaming preview: the rendered text so far, cut to fit one message."""
    budget = t.max_text - 2
    head = text if len(text) <= budget else text[: budget - 1] + "…"
    rendered = t.render(head + " …")
    return rendered if len(rendered) <= t.max_text else rendered[: t.max_text]
