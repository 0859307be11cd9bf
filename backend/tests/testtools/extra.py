"""Tools added by import path in the tools-config tests (``tools.extra``)."""

from __future__ import annotations

import asyncio

from langchain_core.tools import BaseTool, tool


@tool
def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


@tool
async def stall(seconds: float) -> str:
    """Wait, then answer (for timeout tests)."""
    await asyncio.Event().wait()  # never set: only a timeout ends it
    return "never"


def make_pair() -> list[BaseTool]:
    @tool
    def one() -> str:
        """One."""
        return "1"

    @tool
    def two() -> str:
        """Two."""
        return "2"

    return [one, two]


NOT_A_TOOL = 42
