"""The lead agent harness: options, thread state, prompt, middlewares, builder."""
