"""``present_files``: show files from outputs (or the workspace) to the user as artifacts."""

from __future__ import annotations

import asyncio

from langchain.tools import tool
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools._common import ToolError, failure, guarded, paths_for
from pronghorn.agent.tools.deps import ToolDeps
from pronghorn.sandbox import safe_open
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import (
    VIRTUAL_OUTPUTS,
    VIRTUAL_WORKSPACE,
    ThreadPaths,
    normalize_virtual,
)

PRESENTABLE = (VIRTUAL_OUTPUTS, VIRTUAL_WORKSPACE)
MAX_FILES = 20


def check_presentable(paths: ThreadPaths, path: str) -> str:
    """The normalised virtual path of an existing file under outputs/ or workspace/.

    Raises :class:`SandboxError` with a readable reason otherwise (blocking: run in a thread).
    """
    virtual = normalize_virtual(path)
    if not any(virtual.startswith(folder + "/") for folder in PRESENTABLE):
        raise SandboxError(
            f"{virtual} cannot be presented: only files under {VIRTUAL_OUTPUTS} (or "
            f"{VIRTUAL_WORKSPACE}) can be shown to the user. Write or copy it there first."
        )
    try:
        safe_open.open_file(paths, virtual).close()
    except safe_open.MissingPathError:
        raise SandboxError(f"{virtual} does not exist.") from None
    except safe_open.NotRegularFileError:
        raise SandboxError(f"{virtual} is not a regular file.") from None
    return virtual


def present_tools(deps: ToolDeps) -> list[BaseTool]:
    @tool("present_files", parse_docstring=True)
    async def present_files(filepaths: list[str], runtime: AgentToolRuntime) -> object:
        """Show finished files to the user (they appear as downloadable artifacts). Call it
        once the files are complete; files must be under /mnt/user-data/outputs.

        Args:
            filepaths: Absolute paths of the files, e.g. ["/mnt/user-data/outputs/report.md"].
        """

        async def body() -> object:
            if not filepaths:
                raise ToolError("filepaths is empty: give at least one file path.")
            if len(filepaths) > MAX_FILES:
                raise ToolError(f"Too many files ({len(filepaths)}); present at most {MAX_FILES}.")
            paths = paths_for(deps, runtime)
            shown: list[str] = []
            problems: list[str] = []
            for path in filepaths:
                try:
                    virtual = await asyncio.to_thread(check_presentable, paths, path)
                except SandboxError as exc:
                    problems.append(str(exc))
                    continue
                if virtual not in shown:
                    shown.append(virtual)
            if not shown:
                return failure(runtime, "present_files", "Nothing presented. " + " ".join(problems))
            text = f"Presented {len(shown)} file(s) to the user: " + ", ".join(shown) + "."
            if problems:
                text += " Not presented: " + " ".join(problems)
            message = ToolMessage(
                content=text, tool_call_id=runtime.tool_call_id, name="present_files"
            )
            return Command(update={"artifacts": shown, "messages": [message]})

        return await guarded("present_files", runtime, body)

    return [present_files]
