"""Agent protocols over the run manager: MCP (assistants as tools), A2A (assistants as
agents) and the OpenAI chat-completions API. Each module is an HTTP adapter; what they
share (finding callable assistants, starting and reading a call) is
runtime/services/agent_calls.py."""
