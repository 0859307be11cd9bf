"""`tool_search` ranking and the middleware's request projection (deferred or not)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool, StructuredTool

from pronghorn.mcp.middleware import McpToolsMiddleware
from pronghorn.mcp.tool_search import TOOL_SEARCH, merge_promoted, rank


def _tool(name: str, description: str) -> BaseTool:
    def run(city: str) -> str:
        return city

    return StructuredTool.from_function(func=run, name=name, description=description)


TOOLS = [
    _tool("gh_create_issue", "Create a GitHub issue in a repository."),
    _tool("gh_list_prs", "List pull requests."),
    _tool("db_query", "Run a SQL query against the database."),
    _tool("weather_today", "Weather forecast for a city."),
]


class FakeCatalog:
    def __init__(self, tools: list[BaseTool], threshold: int) -> None:
        self._tools = tools
        self.config = SimpleNamespace(tool_search_threshold=threshold)
        self.allows: list[Any] = []

    def tools(self, allow: Any = None) -> list[BaseTool]:
        self.allows.append(allow)
        return [t for t in self._tools if allow is None or t.name.split("_")[0] in allow]

    def describe_servers(self, allow: Any = None) -> list[tuple[str, str]]:
        return [("gh", "GitHub"), ("db", "")]


def test_rank_by_words_and_exact_selection():
    assert rank(TOOLS, "create a github issue")[0].name == "gh_create_issue"
    assert [t.name for t in rank(TOOLS, "sql database")] == ["db_query"]
    assert rank(TOOLS, "nothing matches zzz") == []
    assert [t.name for t in rank(TOOLS, "select:db_query, gh_list_prs, nope")] == [
        "db_query",
        "gh_list_prs",
    ]
    assert merge_promoted(["a"], ["b", "a"]) == ["a", "b"]
    assert merge_promoted(None, None) == []


def _request(tools: list[BaseTool], state: dict[str, Any]) -> ModelRequest:
    return ModelRequest(
        model=None,  # type: ignore[arg-type]
        messages=[],
        system_message=SystemMessage(content="base prompt"),
        tools=list(tools),
        state=state,  # type: ignore[arg-type]
        runtime=None,  # type: ignore[arg-type]
    )


def _names(request: ModelRequest) -> list[str]:
    return [t.name for t in request.tools if isinstance(t, BaseTool)]


def test_few_tools_are_all_offered_and_built_ins_win_names():
    builtin = _tool("db_query", "the built-in one")
    mw = McpToolsMiddleware(FakeCatalog(TOOLS, threshold=10))  # type: ignore[arg-type]
    seen = mw._project(_request([builtin], {"messages": []}))
    assert _names(seen) == ["db_query", "gh_create_issue", "gh_list_prs", "weather_today"]
    assert seen.tools[0] is builtin


def test_many_tools_are_deferred_until_promoted():
    catalog = FakeCatalog(TOOLS, threshold=2)
    mw = McpToolsMiddleware(catalog, allow=["gh", "db", "weather"])  # type: ignore[arg-type]
    first = mw._project(_request([], {"messages": []}))
    assert _names(first) == [TOOL_SEARCH]
    assert first.system_message is not None
    note = str(first.system_message.content)
    assert note.startswith("base prompt") and "4 more tools" in note and "gh (GitHub)" in note
    later = mw._project(_request([], {"messages": [], "mcp_promoted": ["db_query"]}))
    assert _names(later) == [TOOL_SEARCH, "db_query"]
    assert catalog.allows[-1] == frozenset({"gh", "db", "weather"})


def test_allow_list_filters_servers():
    mw = McpToolsMiddleware(FakeCatalog(TOOLS, threshold=10), allow=["db"])  # type: ignore[arg-type]
    assert _names(mw._project(_request([], {"messages": []}))) == ["db_query"]
    empty = McpToolsMiddleware(FakeCatalog(TOOLS, threshold=10), allow=[])  # type: ignore[arg-type]
    request = _request([], {"messages": []})
    assert empty._project(request) is request


def test_agent_options_carry_the_mcp_allow_list():
    from pronghorn.agent.options import AgentOptions

    assert AgentOptions.from_run(context={}).mcp_servers is None
    picked = AgentOptions.from_run(context={"mcp_servers": ["gh", "db"]})
    assert picked.mcp_servers == ("gh", "db")
    none = AgentOptions.from_run(config={"configurable": {"mcp_servers": []}})
    assert none.mcp_servers == () and none.key() != picked.key() != AgentOptions().key()
