"""Runs one sub-agent inside the ``task`` tool call that asked for it.

The sub-agent is a ``create_agent`` graph streamed right here, in the tool call's own
asyncio task, with the tool call's config: LangGraph treats it as a subgraph of the run (its
namespace is the tool task's), so it shares the thread, its files, the sandbox and the
user identity, its model calls reach the run's callbacks (the run's token usage includes
them), and cancelling the run cancels it at once — no thread pool, no private loop, no
polling. It has no checkpointer of its own (one-shot) and never the ``task`` tool (no
nesting).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# LangGraph's ``Checkpointer`` alias in create_agent's signature leaves out
# BaseCheckpointSaver's type argument (a library typing gap, not a value of ours).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from pronghorn.agent.middlewares import (
    CircuitBreakers,
    DanglingToolCallMiddleware,
    LLMErrorMiddleware,
    LoopDetectionMiddleware,
    SafetyFinishReasonMiddleware,
    ToolErrorMiddleware,
    ToolOutputBudgetMiddleware,
)
from pronghorn.agent.middlewares.folding import Middleware
from pronghorn.agent.prompt_extensions import skills_section
from pronghorn.agent.state import AgentGraph, ThreadState
from pronghorn.agent.stream_events import write_direct
from pronghorn.config.schema.app import AppConfig
from pronghorn.models.factory import ModelFactory
from pronghorn.skills.model import RunSkill
from pronghorn.subagents.events import FINAL_EVENT, Status, clip, message_text, step_of
from pronghorn.subagents.pool import SubagentPool
from pronghorn.subagents.specs import SubagentSpec, tools_for
from pronghorn.subagents.turns import STOP_KEY, TurnLimitMiddleware

log = logging.getLogger("pronghorn.subagents")

# The task tool's stream writer: each call sends one ``custom`` event of the run.
Writer = Callable[[Mapping[str, object]], None]

MAX_STEPS = 100  # steps of the trail kept in the tool result (the live events have all)
MAX_SAVED_TEXT = 500  # characters of a step's text kept there

_WORKDIR = """

<working_directory>
You share the lead agent's folders: /mnt/user-data/workspace (scratch), \
/mnt/user-data/uploads (the user's files, read-only) and /mnt/user-data/outputs \
(deliverables). Use these absolute paths in every tool call.
</working_directory>"""


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    llm_calls: int = 0

    def add(self, message: AIMessage) -> None:
        usage = message.usage_metadata
        if not usage:
            return
        self.llm_calls += 1
        self.input_tokens += int(usage.get("input_tokens") or 0)
        self.output_tokens += int(usage.get("output_tokens") or 0)
        self.total_tokens += int(usage.get("total_tokens") or 0)

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "llm_calls": self.llm_calls,
        }


@dataclass
class Outcome:
    """How one sub-agent ended, as the lead agent and the client see it."""

    task_id: str
    subagent_type: str
    status: Status
    result: str = ""
    error: str | None = None
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    duration_s: float = 0.0
    model: str = ""
    steps: list[dict[str, object]] = field(default_factory=list)  # the trail, for reloads

    def event(self) -> dict[str, object]:
        data: dict[str, object] = {
            "type": FINAL_EVENT[self.status],
            "task_id": self.task_id,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "usage": self.usage.as_dict(),
            "duration_s": round(self.duration_s, 3),
        }
        if self.status == "completed":
            data["result"] = self.result
        else:
            data["error"] = self.error or self.stop_reason or self.status
            if self.result:
                data["result"] = self.result
        return data

    def note(self, index: int, step: dict[str, object]) -> None:
        """Record step ``index`` (1-based) of the trail, or replace it when rewritten (kept
        shorter than the live event: the trail lives in the thread's state)."""
        step = {**step, "content": clip(str(step.get("content") or ""), MAX_SAVED_TEXT)}
        if index <= len(self.steps):
            self.steps[index - 1] = step
        elif index <= MAX_STEPS:
            self.steps.append(step)

    def tool_text(self) -> str:
        head = f"Task {self.status}"
        if self.stop_reason:
            head += f" (stop reason: {self.stop_reason})"
        head += f" after {self.duration_s:.1f}s."
        if self.status != "completed" and self.error:
            head += f"\nError: {self.error}"
        if self.result:
            head += f"\n\nResult:\n{self.result}"
        return head

    def details(self) -> dict[str, object]:
        return {
            "task_id": self.task_id,
            "subagent_type": self.subagent_type,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "model": self.model,
            "usage": self.usage.as_dict(),
            "duration_s": round(self.duration_s, 3),
            "steps": self.steps,
        }


@dataclass
class SubagentRunner:
    """Builds (once per type) and runs the sub-agents of one lead agent build.

    ``tools`` are the lead agent's own tools (the type picks from them); ``config`` and
    ``models`` its config snapshot and model factory; ``pool`` the app's global limit."""

    config: AppConfig
    models: ModelFactory
    parent_model: str
    tools: Sequence[BaseTool]
    pool: SubagentPool
    data_dir: Path
    breakers: CircuitBreakers = field(default_factory=CircuitBreakers)
    retry_base_delay_s: float = 0.5
    _graphs: dict[tuple[object, ...], tuple[AgentGraph, str]] = field(default_factory=dict)

    async def skills_for(self, spec: SubagentSpec, config: RunnableConfig) -> tuple[RunSkill, ...]:
        """The run user's enabled skills within the type's allow-list (None: all of them)."""
        owner = dict(config.get("configurable") or {}).get("langgraph_auth_user_id")
        if self.pool.skills is None or not owner:
            return ()
        return await self.pool.skills.for_run(str(owner), spec.skills, self.config)

    def _build(
        self, spec: SubagentSpec, skills: tuple[RunSkill, ...] = ()
    ) -> tuple[AgentGraph, str]:
        entry = self.models.resolve(spec.model or self.parent_model)
        model = self.models.create(entry.name, thinking_enabled=False)
        cfg = self.config.agent
        chain: list[Middleware] = [
            DanglingToolCallMiddleware(),
            LLMErrorMiddleware(
                entry.name,
                breakers=self.breakers,
                max_attempts=entry.max_retries + 1,
                base_delay_s=self.retry_base_delay_s,
            ),
            LoopDetectionMiddleware(
                warn_repeats=cfg.loop_warn_repeats, stop_repeats=cfg.loop_stop_repeats
            ),
            SafetyFinishReasonMiddleware(),
            TurnLimitMiddleware(spec.max_turns),
            ToolOutputBudgetMiddleware(
                self.data_dir,
                soft_chars=cfg.tool_output_soft_chars,
                hard_chars=cfg.tool_output_hard_chars,
            ),
            ToolErrorMiddleware(),
        ]
        graph = create_agent(
            model=model,
            tools=tools_for(spec, self.tools),
            system_prompt=spec.system_prompt + skills_section(skills) + _WORKDIR,
            state_schema=ThreadState,
            middleware=chain,
            name=f"subagent:{spec.name}",
            checkpointer=False,
        )
        return graph, entry.name

    async def graph_for(
        self, spec: SubagentSpec, skills: tuple[RunSkill, ...] = ()
    ) -> tuple[AgentGraph, str]:
        key = (*spec.key(), skills)
        found = self._graphs.get(key)
        if found is None:
            found = await asyncio.to_thread(self._build, spec, skills)
            self._graphs[key] = found
        return found

    async def run(
        self,
        spec: SubagentSpec,
        *,
        task_id: str,
        description: str,
        prompt: str,
        config: RunnableConfig,
        write: Writer,
    ) -> Outcome:
        """Run the sub-agent to its end; cancellation (of the run) propagates after the
        ``task_cancelled`` event is written."""
        outcome = Outcome(task_id=task_id, subagent_type=spec.name, status="failed")
        started = time.monotonic()
        write(
            {
                "type": "task_started",
                "task_id": task_id,
                "description": description,
                "subagent_type": spec.name,
                "prompt": prompt[:2000],
                "started_at": time.time(),
            }
        )
        try:
            skills = await self.skills_for(spec, config)
            graph, outcome.model = await self.graph_for(spec, skills)
            if not self.pool.has_room():
                write({"type": "task_running", "task_id": task_id, "message": _WAITING})
            async with self.pool.slot():
                started = time.monotonic()
                async with asyncio.timeout(spec.timeout_s):
                    await self._stream(graph, spec, prompt, config, outcome, write)
        except asyncio.CancelledError:
            outcome.status, outcome.stop_reason = "cancelled", "parent_cancelled"
            outcome.duration_s = time.monotonic() - started
            # The run's stream is gone already: past the writer, to the run's log.
            with contextlib.suppress(Exception):
                await write_direct(outcome.event(), config)
            raise
        except TimeoutError:
            outcome.status, outcome.stop_reason = "timed_out", "timeout"
            outcome.error = f"The sub-agent did not finish within {spec.timeout_s:g}s."
        except Exception as exc:
            log.warning("sub-agent failed", extra={"task_id": task_id, "error": repr(exc)[:300]})
            outcome.status, outcome.stop_reason = "failed", "error"
            outcome.error = f"{type(exc).__name__}: {exc}"
        outcome.duration_s = time.monotonic() - started
        write(outcome.event())
        return outcome

    async def _stream(
        self,
        graph: AgentGraph,
        spec: SubagentSpec,
        prompt: str,
        config: RunnableConfig,
        outcome: Outcome,
        write: Writer,
    ) -> None:
        child: RunnableConfig = {
            **config,
            "recursion_limit": spec.max_turns * 6 + 20,  # the turn limit stops it first
            "metadata": {
                **(config.get("metadata") or {}),
                "subagent_task_id": outcome.task_id,
                "subagent_type": spec.name,
            },
        }
        # A message keeps its index; a guard may rewrite it in a later step (same id, new
        # content: e.g. the turn limit drops its tool calls), and then it is sent again
        # with the same ``message_index`` for the client to replace.
        sent: dict[str, tuple[int, dict[str, object]]] = {}
        last: BaseMessage | None = None
        # LangGraph's astream leaves its Command input unparameterised (Command[Unknown]).
        stream = graph.astream(  # pyright: ignore[reportUnknownMemberType]
            {"messages": [HumanMessage(content=prompt)]}, child, stream_mode="values"
        )
        async for values in stream:
            messages: list[BaseMessage] = list(values.get("messages") or [])
            for m in messages:
                if isinstance(m, HumanMessage):
                    continue
                key = m.id or str(id(m))
                step = step_of(m)
                known = sent.get(key)
                if step is None or (known is not None and known[1] == step):
                    continue
                if known is None and isinstance(m, AIMessage):
                    outcome.usage.add(m)
                index = known[0] if known is not None else len(sent) + 1
                sent[key] = (index, step)
                outcome.note(index, step)
                write(
                    {
                        "type": "task_running",
                        "task_id": outcome.task_id,
                        "message": step,
                        "message_index": index,
                    }
                )
            if messages:
                last = messages[-1]
        _settle(outcome, last)


_WAITING = {"type": "status", "content": "Waiting for a free sub-agent slot."}


def _settle(outcome: Outcome, last: BaseMessage | None) -> None:
    if not isinstance(last, AIMessage):
        outcome.status, outcome.stop_reason = "failed", "no_answer"
        outcome.error = "The sub-agent ended without an answer."
        return
    text = message_text(last)
    outcome.result = text
    extra = last.additional_kwargs
    if extra.get(STOP_KEY) == "max_turns":
        outcome.status, outcome.stop_reason = "failed", "max_turns"
        outcome.error = "The sub-agent reached its turn limit before finishing."
    elif extra.get("loop_stopped"):
        outcome.status, outcome.stop_reason = "failed", "loop"
        outcome.error = "The sub-agent repeated the same tool call without progress."
    elif extra.get("error_fallback"):
        outcome.status, outcome.stop_reason = "failed", "model_error"
        outcome.error = text
        outcome.result = ""
    else:
        outcome.status = "completed"
