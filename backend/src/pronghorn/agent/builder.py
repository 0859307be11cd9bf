"""``build_lead_agent``: the one place the lead agent is assembled.

The agent is LangChain's ``create_agent`` (model node ↔ tool node loop) with
:class:`ThreadState` and a middleware chain in named phases. Within ``create_agent``
``before_*`` hooks run in list order, ``after_*`` hooks in reverse, and ``wrap_*`` hooks
nest with the first entry outermost; the phase order below is chosen with that in mind
(docs/agent.md has the resulting per-hook order).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# LangGraph's ``Checkpointer`` alias in create_agent's signature leaves out
# BaseCheckpointSaver's type argument (a library typing gap, not a value of ours).
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from pronghorn.agent.extensions import ToolExtension
from pronghorn.agent.middlewares import (
    ChainLink,
    CircuitBreakers,
    ClarificationMiddleware,
    DanglingToolCallMiddleware,
    LLMErrorMiddleware,
    LoopDetectionMiddleware,
    SafetyFinishReasonMiddleware,
    SandboxMiddleware,
    SummarizationMiddleware,
    ThreadDataMiddleware,
    TitleMiddleware,
    TodoReminderMiddleware,
    ToolErrorMiddleware,
    ToolOutputBudgetMiddleware,
    UploadsMiddleware,
    ViewedImagesMiddleware,
)
from pronghorn.agent.middlewares.approval import ApprovalMiddleware
from pronghorn.agent.middlewares.budget import BudgetMiddleware
from pronghorn.agent.middlewares.folding import Middleware, fold_hooks
from pronghorn.agent.middlewares.guardrail import GuardrailMiddleware
from pronghorn.agent.middlewares.memory import memory_chain
from pronghorn.agent.middlewares.skills import SkillActivationMiddleware
from pronghorn.agent.middlewares.tool_timeouts import ToolTimeoutMiddleware
from pronghorn.agent.options import AgentOptions
from pronghorn.agent.prompt import build_system_prompt
from pronghorn.agent.state import AgentGraph, ThreadState
from pronghorn.config.schema.app import AgentConfig, AppConfig
from pronghorn.config.schema.memory import MemoryConfig
from pronghorn.governance.plan import GovernancePlan
from pronghorn.governance.ports import GovernancePorts
from pronghorn.mcp.middleware import McpToolsMiddleware
from pronghorn.mcp.server_manager import McpManager
from pronghorn.memory.service import MemoryService
from pronghorn.models.factory import ModelFactory
from pronghorn.sandbox.base import SandboxProvider
from pronghorn.skills.model import RunSkill

log = logging.getLogger("pronghorn.agent")

OFFLINE_PROVIDERS = frozenset({"scripted", "demo"})

PHASES = (
    "state_prep",
    "request_projection",
    "model_call_policy",
    "response_guards",
    "tool_gates",
    "tool_post_processing",
    "finalization",
)


@dataclass
class AgentParts:
    """Everything the chain needs, passed explicitly (tests build one by hand)."""

    model: BaseChatModel
    model_name: str
    tools: Sequence[BaseTool]
    data_dir: Path
    agent_config: AgentConfig = field(default_factory=AgentConfig)
    sandboxes: SandboxProvider | None = None
    breakers: CircuitBreakers = field(default_factory=CircuitBreakers)
    internal_model: BaseChatModel | None = None  # title + summary; None: local fallbacks
    retry_base_delay_s: float = 0.5
    max_attempts: int = 3  # provider calls per model call: the entry's max_retries + 1
    fallbacks: Sequence[ChainLink] = ()  # the models that take over a failed call, in order
    fallback_on: frozenset[str] = frozenset()  # the model's non-retryable reasons to fall back
    vision: bool = False  # the model accepts images: view_image results are shown to it
    guards: Sequence[Middleware] = ()  # extra response guards (sub-agents)
    mcp: Middleware | None = None  # MCP tools (pronghorn.mcp.middleware)
    skills: Sequence[RunSkill] = ()  # the run's enabled skills (prompt + slash activation)
    tool_timeouts: dict[str, float] = field(default_factory=dict[str, float])
    governance: GovernancePlan | None = None  # budgets, approvals, guardrails; None: off
    memory: MemoryService | None = None  # long-term memory (None: none)
    memory_config: MemoryConfig = field(default_factory=MemoryConfig)


def middleware_phases(
    parts: AgentParts, options: AgentOptions
) -> list[tuple[str, list[Middleware]]]:
    """The chain, phase by phase (flattened in this order for ``create_agent``)."""
    cfg = parts.agent_config
    images: list[Middleware] = [ViewedImagesMiddleware()] if parts.vision else []
    mcp: list[Middleware] = [parts.mcp] if parts.mcp is not None else []
    plan = parts.governance
    budget: list[Middleware] = (
        [BudgetMiddleware(plan, parts.model_name)] if plan is not None else []
    )
    gates: list[Middleware] = []
    if plan is not None:
        gates = [
            *([GuardrailMiddleware(plan)] if plan.guardrails else []),
            ApprovalMiddleware(plan),
        ]
    memory = memory_chain(
        parts.memory,
        parts.memory_config,
        model_name=parts.model_name,
        agent_name=options.agent_name,
    )
    return [
        (
            "state_prep",
            [
                ThreadDataMiddleware(parts.data_dir),
                UploadsMiddleware(parts.data_dir),
                SandboxMiddleware(parts.sandboxes),
            ],
        ),
        (
            "request_projection",
            [
                SummarizationMiddleware(
                    trigger_tokens=cfg.summarization_trigger_tokens,
                    model=parts.internal_model,
                    before_compact=memory.before_compact,
                ),
                TodoReminderMiddleware(),
                SkillActivationMiddleware(parts.skills),
                DanglingToolCallMiddleware(),
                *images,
                *mcp,
                *memory.injection,
            ],
        ),
        (
            "model_call_policy",
            [
                *budget,
                LLMErrorMiddleware(
                    parts.model_name,
                    breakers=parts.breakers,
                    max_attempts=parts.max_attempts,
                    base_delay_s=parts.retry_base_delay_s,
                    fallbacks=parts.fallbacks,
                    fallback_on=parts.fallback_on,
                    ports=plan.ports if plan is not None else None,
                ),
            ],
        ),
        (
            "response_guards",
            [
                LoopDetectionMiddleware(
                    warn_repeats=cfg.loop_warn_repeats, stop_repeats=cfg.loop_stop_repeats
                ),
                SafetyFinishReasonMiddleware(),
                *parts.guards,
            ],
        ),
        ("tool_gates", [*gates, ClarificationMiddleware()]),
        (
            "tool_post_processing",
            [
                ToolOutputBudgetMiddleware(
                    parts.data_dir,
                    soft_chars=cfg.tool_output_soft_chars,
                    hard_chars=cfg.tool_output_hard_chars,
                ),
                ToolErrorMiddleware(),
                ToolTimeoutMiddleware(parts.tool_timeouts),
            ],
        ),
        (
            "finalization",
            [
                TitleMiddleware(max_chars=cfg.title_max_chars, model=parts.internal_model),
                *memory.finalization,
            ],
        ),
    ]


def build_middlewares(parts: AgentParts, options: AgentOptions) -> list[Middleware]:
    return [m for _, group in middleware_phases(parts, options) for m in group]


def build_agent(
    parts: AgentParts,
    options: AgentOptions,
    *,
    today: dt.date | None = None,
    middleware: Sequence[Middleware] | None = None,
) -> AgentGraph:
    """A compiled lead-agent graph (no checkpointer: the caller attaches one).

    The chain's node hooks are folded (``fold_hooks``): a turn is ``__start__``, one
    ``TurnStart`` node, then ``model`` ⇄ ``tools``, so it writes 4 checkpoints plus 2 per
    tool round instead of one per hook."""
    chain = list(middleware) if middleware is not None else build_middlewares(parts, options)
    has_tools = bool(parts.tools) or any(getattr(m, "tools", None) for m in chain)
    return create_agent(
        model=parts.model,
        tools=list(parts.tools),
        system_prompt=build_system_prompt(options, today=today, skills=parts.skills),
        state_schema=ThreadState,
        middleware=fold_hooks(chain, has_tools=has_tools, state_schema=ThreadState),
        name="lead_agent",
    )


@dataclass(frozen=True)
class AgentDeps:
    """What every lead agent of one app shares: the sandbox provider, the data dir and the
    circuit breakers (one per model, kept across rebuilds)."""

    sandboxes: SandboxProvider
    data_dir: Path
    breakers: CircuitBreakers = field(default_factory=CircuitBreakers)
    # the sub-agents' ``task`` tool and its guard (pronghorn.subagents.SubagentExtension,
    # passed in by the graph factory: agent/ never imports subagents/); None: no task tool
    subagents: ToolExtension | None = None
    mcp: McpManager | None = None  # the app's MCP servers (None: no MCP tools)
    governance: GovernancePorts | None = (
        None  # usage ledger + audit (runtime/services/governance.py)
    )
    memory: MemoryService | None = None


def default_tools(
    deps: AgentDeps, options: AgentOptions, *, vision: bool, config: AppConfig
) -> list[BaseTool]:
    """The tools engineer's ``build_tools`` with the app's dependencies, plus ``tools.extra``,
    filtered by the ``tools:`` config and a custom agent's tool groups."""
    from pronghorn.agent.tools import ToolDeps, build_tools
    from pronghorn.agent.tools.selection import extra_tools, select_tools
    from pronghorn.web.search import search_provider_from_config

    tool_deps = ToolDeps(
        sandboxes=deps.sandboxes,
        config=config,
        data_dir=deps.data_dir,
        search=search_provider_from_config(config.web),
        vision=vision,
    )
    extras, _ = extra_tools(config.tools)
    tools = [*build_tools(tool_deps, options=options), *extras]
    if deps.memory is not None and config.memory.enabled and config.memory.mode == "tool":
        from pronghorn.agent.tools.memory import memory_tools

        tools += memory_tools(deps.memory, agent_name=options.agent_name)
    return select_tools(tools, config.tools, options.tool_groups)


def build_lead_agent(
    deps: AgentDeps,
    options: AgentOptions,
    *,
    config: AppConfig,
    models: ModelFactory,
    tools: Sequence[BaseTool] | None = None,
    today: dt.date | None = None,
    skills: Sequence[RunSkill] = (),
) -> AgentGraph:
    """The lead agent for one (config snapshot, options): ``config``/``models`` are the
    run's snapshot and its model factory; ``skills`` the run's enabled skills."""
    entry = models.resolve(options.model_name)
    thinking = models.thinking_for(entry, options.thinking_enabled)
    model = models.create(
        entry.name, thinking_enabled=thinking, reasoning_effort=options.reasoning_effort
    )
    fallbacks: list[ChainLink] = []
    for name in models.fallback_chain(entry.name):
        other = models.resolve(name)
        fallbacks.append(
            ChainLink(
                name=other.name,
                model=models.create(
                    other.name,
                    thinking_enabled=models.thinking_for(other, options.thinking_enabled),
                    reasoning_effort=options.reasoning_effort,
                ),
                max_attempts=other.max_retries + 1,
                fallback_on=frozenset(other.fallback_on),
            )
        )
    internal = None
    if entry.provider not in OFFLINE_PROVIDERS:
        internal = models.create(entry.name, thinking_enabled=False)
    if tools is None:
        tools = default_tools(deps, options, vision=entry.supports_vision, config=config)
    guards: list[Middleware] = []
    if options.subagent_enabled and deps.subagents is not None:
        task, guard = deps.subagents(
            config=config,
            models=models,
            parent_model=entry.name,
            tools=tools,
            data_dir=deps.data_dir,
            breakers=deps.breakers,
        )
        tools, guards = [*tools, task], [guard]
    parts = AgentParts(
        model=model,
        model_name=entry.name,
        tools=tools,
        data_dir=deps.data_dir,
        agent_config=config.agent,
        sandboxes=deps.sandboxes,
        breakers=deps.breakers,
        internal_model=internal,
        max_attempts=entry.max_retries + 1,
        fallbacks=tuple(fallbacks),
        fallback_on=frozenset(entry.fallback_on),
        vision=entry.supports_vision,
        guards=guards,
        mcp=McpToolsMiddleware(deps.mcp, options.mcp_servers) if deps.mcp is not None else None,
        skills=tuple(skills),
        tool_timeouts=dict(config.tools.timeouts),
        governance=GovernancePlan.from_config(config, deps.governance),
        memory=deps.memory,
        memory_config=config.memory,
    )
    return build_agent(parts, options, today=today)
