"""Run engine: run manager, event broker, checkpointer and store factories, scheduler."""
