"""The components the AppRuntime starts after its core, each an async context manager factory:
the core ones (models, sandbox, broker, runs), the Redis bus, MCP servers and memory."""
