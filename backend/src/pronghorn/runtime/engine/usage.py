"""Token usage of one run, summed from every chat model call's `usage_metadata`."""

from __future__ import annotations

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.outputs import LLMResult


class UsageCounter(AsyncCallbackHandler):
    """Callback handler added to each run's config; never raises into the run."""

    raise_error = False
    run_inline = True

    # Only model calls count: LangChain skips dispatching every other kind of event (each
    # graph node's chain start and end, tools, retrievers, custom events) to this handler.
    @property
    def ignore_chain(self) -> bool:
        return True

    @property
    def ignore_agent(self) -> bool:
        return True

    @property
    def ignore_retriever(self) -> bool:
        return True

    @property
    def ignore_custom_event(self) -> bool:
        return True

    def __init__(self) -> None:
        self.input_tokens = 0
        self.output_tokens = 0
        self.total_tokens = 0
        self.llm_calls = 0

    async def on_llm_end(self, response: LLMResult, **kwargs: object) -> None:
        self.llm_calls += 1
        for generations in response.generations:
            for gen in generations:
                usage = getattr(getattr(gen, "message", None), "usage_metadata", None)
                if not usage:
                    continue
                self.input_tokens += int(usage.get("input_tokens") or 0)
                self.output_tokens += int(usage.get("output_tokens") or 0)
                self.total_tokens += int(
                    usage.get("total_tokens")
                    or (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
                )

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "llm_calls": self.llm_calls,
        }
