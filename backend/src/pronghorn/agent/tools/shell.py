"""The ``bash`` tool: one command in the thread's sandbox."""

from __future__ import annotations

from langchain.tools import tool
from langchain_core.tools import BaseTool

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools._common import guarded, sandbox_for
from pronghorn.agent.tools.deps import ToolDeps
from pronghorn.sandbox.base import CommandResult


def format_result(result: CommandResult, timeout_s: float) -> str:
    """stdout, then stderr (if any), then a status line with the exit code."""
    parts: list[str] = []
    if result.stdout:
        parts.append(result.stdout.rstrip("\n"))
    if result.stderr:
        parts.append("[stderr]\n" + result.stderr.rstrip("\n"))
    if not parts:
        parts.append("(no output)")
    if result.truncated:
        parts.append("[output truncated: redirect long output to a file and read it in parts]")
    if result.timed_out:
        parts.append(f"[timed out after {timeout_s:g}s: the command was killed]")
    parts.append(f"[exit code: {result.exit_code}]")
    return "\n".join(parts)


def shell_tools(deps: ToolDeps) -> list[BaseTool]:
    timeout_s = deps.config.tools.timeouts.get("bash", deps.config.sandbox.command_timeout_s)

    @tool("bash", parse_docstring=True)
    async def bash(description: str, command: str, runtime: AgentToolRuntime) -> object:
        """Run a bash command in the sandbox. The working directory is
        /mnt/user-data/workspace; uploads are in /mnt/user-data/uploads and files for the
        user go to /mnt/user-data/outputs. Returns stdout, stderr and the exit code.

        Args:
            description: Why you run this command (one short sentence).
            command: The bash command line. Non-interactive; no network unless enabled.
        """

        async def body() -> str:
            sb = await sandbox_for(deps, runtime)
            result = await sb.execute(command, timeout_s)
            return format_result(result, timeout_s)

        return await guarded("bash", runtime, body)

    bash.description += f" Commands are killed after {timeout_s:g}s."
    return [bash]
