"""LLM-free graphs served by test servers and the benchmark (via `graphs:` in config)."""
