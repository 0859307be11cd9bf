"""File tools: read_file, write_file, str_replace, ls, glob, grep (all through the sandbox)."""

from __future__ import annotations

from langchain.tools import tool
from langchain_core.tools import BaseTool

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools._common import guarded, sandbox_for
from pronghorn.agent.tools.deps import ToolDeps
from pronghorn.sandbox.paths import VIRTUAL_WORKSPACE, normalize_virtual

_TRUNCATION_MARK = "\n[... truncated at "
GREP_MAX_MATCHES = 200


def number_lines(text: str, first_line: int) -> str:
    """``cat -n`` style: right-aligned line number, a tab, the line."""
    notice = ""
    cut = text.rfind(_TRUNCATION_MARK)
    if cut >= 0 and text.endswith("...]"):
        text, notice = text[:cut], text[cut:]
    lines = text.splitlines()
    width = max(6, len(str(first_line + len(lines))))
    body = "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, start=first_line))
    return body + notice


def file_tools(deps: ToolDeps) -> list[BaseTool]:
    @tool("read_file", parse_docstring=True)
    async def read_file(
        description: str,
        path: str,
        runtime: AgentToolRuntime,
        start_line: int | None = None,
        end_line: int | None = None,
    ) -> object:
        """Read a text file. Output lines are numbered (number, tab, text); long files are cut,
        so read big files in ranges.

        Args:
            description: Why you read this file (one short sentence).
            path: Absolute path under /mnt/user-data (or relative to the workspace).
            start_line: First line to read (1-based, inclusive). Default: 1.
            end_line: Last line to read (inclusive). Default: the end of the file.
        """

        async def body() -> str:
            sb = await sandbox_for(deps, runtime)
            text = await sb.read_file(path, start_line, end_line)
            first = start_line or 1
            if not text:
                shown = normalize_virtual(path)
                if first > 1:
                    return f"{shown} has fewer than {first} lines (nothing to show)."
                return f"{shown} is empty."
            return number_lines(text, first)

        return await guarded("read_file", runtime, body)

    @tool("write_file", parse_docstring=True)
    async def write_file(
        description: str,
        path: str,
        content: str,
        runtime: AgentToolRuntime,
        append: bool = False,
    ) -> object:
        """Create or overwrite a text file (parent folders are created). Files for the user go
        to /mnt/user-data/outputs. To change part of an existing file, prefer str_replace.

        Args:
            description: Why you write this file (one short sentence).
            path: Absolute path under /mnt/user-data/workspace or /mnt/user-data/outputs.
            content: The full text to write.
            append: Add content to the end of the file instead of replacing it.
        """

        async def body() -> str:
            sb = await sandbox_for(deps, runtime)
            await sb.write_file(path, content, append)
            verb = "Appended" if append else "Wrote"
            return f"{verb} {len(content)} characters to {normalize_virtual(path)}."

        return await guarded("write_file", runtime, body)

    @tool("str_replace", parse_docstring=True)
    async def str_replace(
        description: str,
        path: str,
        old_str: str,
        new_str: str,
        runtime: AgentToolRuntime,
        replace_all: bool = False,
    ) -> object:
        """Edit a text file by replacing an exact piece of text. old_str must occur exactly
        once (add surrounding lines to make it unique) unless replace_all is true.

        Args:
            description: Why you make this edit (one short sentence).
            path: Absolute path of the file under /mnt/user-data.
            old_str: The exact text to replace (whitespace matters; no line numbers).
            new_str: The replacement text (may be empty to delete).
            replace_all: Replace every occurrence instead of exactly one.
        """

        async def body() -> str:
            sb = await sandbox_for(deps, runtime)
            count = await sb.str_replace(path, old_str, new_str, replace_all)
            plural = "occurrence" if count == 1 else "occurrences"
            return f"Replaced {count} {plural} in {normalize_virtual(path)}."

        return await guarded("str_replace", runtime, body)

    @tool("ls", parse_docstring=True)
    async def ls(description: str, path: str, runtime: AgentToolRuntime) -> object:
        """List a folder two levels deep (folders end with /).

        Args:
            description: Why you list this folder (one short sentence).
            path: Absolute folder path, e.g. /mnt/user-data or /mnt/user-data/workspace.
        """

        async def body() -> str:
            sb = await sandbox_for(deps, runtime)
            entries = await sb.list_dir(path, max_depth=2)
            if not entries:
                return f"{normalize_virtual(path)} is empty."
            return "\n".join(entries)

        return await guarded("ls", runtime, body)

    @tool("glob", parse_docstring=True)
    async def glob(pattern: str, runtime: AgentToolRuntime, path: str | None = None) -> object:
        """Find files by name pattern (** matches any depth), e.g. '**/*.py'.

        Args:
            pattern: Glob pattern relative to the search folder.
            path: Folder to search. Default: /mnt/user-data/workspace.
        """

        async def body() -> str:
            sb = await sandbox_for(deps, runtime)
            found = await sb.glob(pattern, path)
            if not found:
                return (
                    f"No files match {pattern!r} in {normalize_virtual(path or VIRTUAL_WORKSPACE)}."
                )
            return "\n".join(found)

        return await guarded("glob", runtime, body)

    @tool("grep", parse_docstring=True)
    async def grep(
        pattern: str,
        runtime: AgentToolRuntime,
        path: str | None = None,
        glob: str | None = None,
    ) -> object:
        """Search file contents with a regular expression (Python syntax). Each hit is
        'path:line: text'; at most 200 hits.

        Args:
            pattern: Regular expression to search for.
            path: File or folder to search. Default: /mnt/user-data/workspace.
            glob: Only search files whose name matches this glob, e.g. '*.md'.
        """

        async def body() -> str:
            sb = await sandbox_for(deps, runtime)
            hits = await sb.grep(pattern, path, glob, max_matches=GREP_MAX_MATCHES)
            if not hits:
                return (
                    f"No matches for {pattern!r} in {normalize_virtual(path or VIRTUAL_WORKSPACE)}."
                )
            if len(hits) >= GREP_MAX_MATCHES:
                hits.append(f"[... stopped at {GREP_MAX_MATCHES} matches; narrow the search ...]")
            return "\n".join(hits)

        return await guarded("grep", runtime, body)

    return [read_file, write_file, str_replace, ls, glob, grep]
