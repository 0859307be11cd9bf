"""A tool for the channel tests (`tools.extra: channels.hold:hold`): it waits inside a run
until the test opens a fake platform's gate (fakes/platform_base.py), so a run stays in
flight exactly as long as a test needs it to."""

from __future__ import annotations

import httpx
from langchain_core.tools import tool


@tool
async def hold(url: str) -> str:
    """Wait until the gate at `url` is opened, then say so."""
    async with httpx.AsyncClient(timeout=120) as http:
        response = await http.get(url)
    return response.text
