"""Governance of the lead agent: budgets, tool approvals and guardrails.

Pure policy and the small contracts (``ports``) the agent's middlewares call; the runtime
implements the ports on the database (runtime/services/governance.py). Below the agent: imports
only config and LangChain.
"""
