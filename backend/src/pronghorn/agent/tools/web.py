"""Web tools: ``web_fetch`` (SSRF-safe, always offered) and ``web_search`` (when configured)."""

from __future__ import annotations

from langchain.tools import tool
from langchain_core.tools import BaseTool

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools._common import failure
from pronghorn.agent.tools.deps import ToolDeps
from pronghorn.web.fetch import fetch_url
from pronghorn.web.search import MAX_RESULTS, SearchError, SearchProvider
from pronghorn.web.ssrf import BlockedURLError, FetchError

MIN_FETCH_CHARS = 2000


def fetch_limit(deps: ToolDeps) -> int:
    """Characters of page text given to the model: kept under the tool-output soft budget."""
    return max(MIN_FETCH_CHARS, deps.config.agent.tool_output_soft_chars - 1000)


def truncate(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def fetch_tools(deps: ToolDeps) -> list[BaseTool]:
    limit = fetch_limit(deps)

    @tool("web_fetch", parse_docstring=True)
    async def web_fetch(url: str, runtime: AgentToolRuntime) -> object:
        """Fetch a web page (http/https) and return its readable text. Long pages are cut;
        private and local network addresses are refused.

        Args:
            url: The full URL, e.g. https://example.com/page.
        """
        try:
            result = await fetch_url(url, config=deps.config.web)
        except (BlockedURLError, FetchError) as exc:
            return failure(runtime, "web_fetch", str(exc))
        text, cut = truncate(result.text, limit)
        head = [f"URL: {result.final_url}", f"Status: {result.status}"]
        if result.content_type:
            head.append(f"Content-Type: {result.content_type}")
        note = ""
        if cut or result.truncated:
            note = f"\n[... page text truncated (showing the first {len(text)} characters) ...]"
        body = text if text.strip() else "(no readable text)"
        return "\n".join(head) + "\n\n" + body + note

    return [web_fetch]


def search_tools(provider: SearchProvider) -> list[BaseTool]:
    @tool("web_search", parse_docstring=True)
    async def web_search(query: str, runtime: AgentToolRuntime, max_results: int = 5) -> object:
        """Search the web; returns titles, URLs and snippets. Use web_fetch to read a result.

        Args:
            query: What to search for.
            max_results: How many results (1-20, default 5).
        """
        count = min(max(1, int(max_results)), MAX_RESULTS)
        try:
            results = await provider.search(query, count)
        except (SearchError, ValueError) as exc:
            return failure(runtime, "web_search", str(exc))
        if not results:
            return f"No results for {query!r}."
        lines: list[str] = []
        for i, r in enumerate(results, start=1):
            lines.append(f"{i}. {r.title or '(no title)'}\n   {r.url}")
            if r.snippet:
                lines.append(f"   {r.snippet}")
        return "\n".join(lines)

    return [web_search]
