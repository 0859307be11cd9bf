"""The built-in lead agent."""

from pronghorn.graphs.lead_agent.graph import LeadAgentFactory

__all__ = ["LeadAgentFactory"]
