"""Long-term memory per user (and optionally per custom agent): facts and summaries kept in
the LangGraph store, updated after runs by a debounced queue, injected into the prompt.

Below the agent and the runtime: it imports neither (the runtime owns the service, the agent's
middlewares and tools use it)."""
