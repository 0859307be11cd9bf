"""Sub-agents: the ``task`` tool, its types and limits (docs/agent.md, "Sub-agents")."""

from pronghorn.subagents.pool import SubagentPool
from pronghorn.subagents.specs import AgentDirectory, CustomAgent, SubagentSpec
from pronghorn.subagents.wiring import SubagentExtension

__all__ = ["AgentDirectory", "CustomAgent", "SubagentExtension", "SubagentPool", "SubagentSpec"]
