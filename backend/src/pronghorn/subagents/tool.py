"""The ``task`` tool: the lead agent delegates one self-contained job to a sub-agent.

Several ``task`` calls of one model response run at the same time (each tool call is its
own LangGraph task, and the tool is async). The result the lead agent reads says how the
sub-agent ended (``completed | failed | cancelled | timed_out``, with a stop reason) and
carries its answer; ``artifact`` holds the same facts as data (status, usage, duration).
"""

from __future__ import annotations

from langchain.tools import tool
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.subagents.runner import SubagentRunner
from pronghorn.subagents.specs import SubagentSpec, agent_spec, configured_specs

_INTRO = (
    "Delegate a self-contained piece of work to a sub-agent that works on its own and "
    "returns a summary. Use it when parts of a job are independent (call task several "
    "times in one response to run them in parallel) or need a focused context; do not "
    "delegate trivial steps or steps that depend on each other's results. The sub-agent "
    "shares this conversation's files but not its messages: put everything it needs in "
    "the prompt. Sub-agent types: "
)


def describe(specs: dict[str, SubagentSpec]) -> str:
    kinds = "; ".join(f"{name}: {spec.description}" for name, spec in specs.items())
    return f"{_INTRO}{kinds}; or the name of one of the user's custom agents."


def _owner(runtime: AgentToolRuntime) -> str | None:
    configurable: dict[str, object] = dict((runtime.config or {}).get("configurable") or {})
    owner = configurable.get("langgraph_auth_user_id")
    return str(owner) if owner else None


async def resolve(runner: SubagentRunner, name: str, owner: str | None) -> SubagentSpec | None:
    cfg = runner.config.subagents
    found = configured_specs(cfg).get(name)
    if found is not None:
        return found
    directory = runner.pool.directory
    if directory is None or owner is None:
        return None
    agent = await directory.find(owner, name)
    return agent_spec(agent, cfg) if agent is not None else None


def task_tool(runner: SubagentRunner) -> BaseTool:
    @tool("task", parse_docstring=True)
    async def task(
        description: str, prompt: str, subagent_type: str, runtime: AgentToolRuntime
    ) -> object:
        """Delegate work to a sub-agent.

        Args:
            description: A short label of the task (3-8 words), shown to the user.
            prompt: The full, self-contained instructions for the sub-agent.
            subagent_type: Which sub-agent type runs it.
        """
        call_id = runtime.tool_call_id or ""
        spec = await resolve(runner, subagent_type.strip(), _owner(runtime))
        if spec is None:
            known = ", ".join(configured_specs(runner.config.subagents))
            return ToolMessage(
                content=f"Error: unknown subagent_type {subagent_type!r}. Use one of: {known}, "
                "or the name of one of the user's custom agents.",
                tool_call_id=call_id,
                name="task",
                status="error",
            )
        outcome = await runner.run(
            spec,
            task_id=call_id,
            description=description.strip() or spec.name,
            prompt=prompt,
            config=runtime.config,
            write=runtime.stream_writer,
        )
        return ToolMessage(
            content=outcome.tool_text(),
            tool_call_id=call_id,
            name="task",
            status="success" if outcome.status == "completed" else "error",
            artifact=outcome.details(),
        )

    task.description = describe(configured_specs(runner.config.subagents))
    return task
