"""Sub-agent types: the built-ins, the config's ``subagents.types`` and custom agents.

A :class:`SubagentSpec` is everything needed to build and bound one sub-agent. The built-ins
are ``general-purpose`` (every tool of the lead agent except ``task``, clarification and
``present_files``) and ``bash`` (shell and file tools). ``subagents.types.<name>`` adds types
or overrides a built-in's fields; a custom agent (an assistant of ``lead_agent`` whose context
names an ``agent_name``) is usable by its name too, found for the run's owner at call time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from langchain_core.tools import BaseTool

from pronghorn.config.schema.subagents import SubagentsConfig, SubagentTypeConfig

# Never offered to a sub-agent: no nesting, nobody to ask, the lead agent presents files.
EXCLUDED_TOOLS = frozenset({"task", "ask_clarification", "present_files"})

FILE_TOOLS = ("ls", "glob", "grep", "read_file", "write_file", "str_replace")

# The tool groups of agent-context.md (a custom agent's ``tool_groups``); a tool not listed
# belongs to the group in its ``metadata["tool_group"]``, else "other".
TOOL_GROUPS: Mapping[str, str] = {
    **dict.fromkeys(FILE_TOOLS, "file"),
    "bash": "shell",
    "web_search": "web",
    "web_fetch": "web",
    "view_image": "image",
    "write_todos": "interaction",
    "ask_clarification": "interaction",
    "present_files": "interaction",
}

Source = Literal["builtin", "config", "agent"]

_GENERAL_PROMPT = """\
You are a sub-agent: the lead agent delegated one self-contained task to you. Work on it \
autonomously with your tools; nobody can answer questions, so make sensible assumptions and \
state them. When done, reply with a concise summary of what you found or did: the key \
results, the files you wrote (absolute paths), and anything left open. Cite web sources \
with their URLs."""

_BASH_PROMPT = """\
You are a command-line sub-agent: the lead agent delegated one task to you that you solve \
with shell commands and file tools. Run the commands, check their output, and reply with a \
concise report of what you ran, what it printed that matters, and the files you changed."""


@dataclass(frozen=True)
class SubagentSpec:
    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None = None  # allow-list of tool names; None: all but excluded
    tool_groups: tuple[str, ...] | None = None  # allow-list of groups; None: any group
    skills: tuple[str, ...] | None = None
    model: str | None = None  # None: the lead agent's model
    max_turns: int = 50
    timeout_s: float = 900.0
    source: Source = "builtin"

    def key(self) -> tuple[object, ...]:
        """What the compiled sub-agent graph depends on (its cache key)."""
        return (
            self.name,
            self.system_prompt,
            self.tools,
            self.tool_groups,
            self.skills,
            self.model,
            self.max_turns,
            self.source,
        )


@dataclass(frozen=True)
class CustomAgent:
    """A custom agent as agent-context.md defines it (an assistant's context)."""

    name: str
    description: str = ""
    system_prompt: str = ""
    model_name: str | None = None
    tool_groups: tuple[str, ...] | None = None
    skills: tuple[str, ...] | None = None


class AgentDirectory(Protocol):
    """Finds a user's custom agent by name (the runtime's is backed by the assistants)."""

    async def find(self, owner_id: str, name: str) -> CustomAgent | None: ...


def builtin_specs(cfg: SubagentsConfig) -> dict[str, SubagentSpec]:
    return {
        "general-purpose": SubagentSpec(
            name="general-purpose",
            description="A capable agent for research and multi-step work that can run on "
            "its own: searching, reading and writing files, running commands.",
            system_prompt=_GENERAL_PROMPT,
            max_turns=cfg.max_turns,
            timeout_s=cfg.timeout_s,
        ),
        "bash": SubagentSpec(
            name="bash",
            description="Runs shell commands and edits files: builds, tests, data wrangling.",
            system_prompt=_BASH_PROMPT,
            tools=("bash", *FILE_TOOLS),
            max_turns=cfg.max_turns,
            timeout_s=cfg.timeout_s,
        ),
    }


def _override(base: SubagentSpec, entry: SubagentTypeConfig) -> SubagentSpec:
    return replace(
        base,
        description=entry.description or base.description,
        system_prompt=entry.system_prompt or base.system_prompt,
        tools=tuple(entry.tools) if entry.tools is not None else base.tools,
        skills=tuple(entry.skills) if entry.skills is not None else base.skills,
        model=None if entry.model == "inherit" else entry.model,
        max_turns=entry.max_turns or base.max_turns,
        timeout_s=entry.timeout_s or base.timeout_s,
    )


def configured_specs(cfg: SubagentsConfig) -> dict[str, SubagentSpec]:
    """Built-ins (with the config's overrides) and the config's own types, by name."""
    specs = builtin_specs(cfg)
    for name, entry in cfg.types.items():
        base = specs.get(name) or SubagentSpec(
            name=name,
            description="",
            system_prompt=_GENERAL_PROMPT,
            max_turns=cfg.max_turns,
            timeout_s=cfg.timeout_s,
            source="config",
        )
        specs[name] = _override(base, entry)
    return specs


def agent_spec(agent: CustomAgent, cfg: SubagentsConfig) -> SubagentSpec:
    prompt = _GENERAL_PROMPT
    if agent.system_prompt:
        prompt += f"\n\n<persona>\n{agent.system_prompt}\n</persona>"
    return SubagentSpec(
        name=agent.name,
        description=agent.description,
        system_prompt=prompt,
        tool_groups=agent.tool_groups,
        skills=agent.skills,
        model=agent.model_name,
        max_turns=cfg.max_turns,
        timeout_s=cfg.timeout_s,
        source="agent",
    )


def group_of(tool: BaseTool) -> str:
    if tool.name in TOOL_GROUPS:
        return TOOL_GROUPS[tool.name]
    group = (tool.metadata or {}).get("tool_group")
    return str(group) if group else "other"


def tools_for(spec: SubagentSpec, available: Sequence[BaseTool]) -> list[BaseTool]:
    """The lead agent's tools this type may use, in their order."""
    out: list[BaseTool] = []
    for t in available:
        if t.name in EXCLUDED_TOOLS:
            continue
        if spec.tools is not None and t.name not in spec.tools:
            continue
        if spec.tool_groups is not None and group_of(t) not in spec.tool_groups:
            continue
        out.append(t)
    return out
