"""The bash tool: output, exit code, truncation, timeout, in both isolation modes."""

from __future__ import annotations

import pytest

from pronghorn.sandbox import bwrap as bw
from tools.conftest import MakeKit, ToolKit


async def test_stdout_stderr_exit_code(kit: ToolKit) -> None:
    text = await kit.text("bash", description="d", command="echo hello; echo oops >&2; exit 3")
    assert text == "hello\n[stderr]\noops\n[exit code: 3]"
    assert await kit.text("bash", description="d", command="true") == "(no output)\n[exit code: 0]"


async def test_runs_in_workspace_with_virtual_paths(kit: ToolKit) -> None:
    await kit.text("bash", description="d", command="echo hi > /mnt/user-data/outputs/x.txt && pwd")
    assert (kit.paths.outputs / "x.txt").read_text() == "hi\n"
    text = await kit.text("bash", description="d", command="wc -c /mnt/user-data/outputs/x.txt")
    assert text.splitlines()[0] == "3 /mnt/user-data/outputs/x.txt"


async def test_truncated_output_is_flagged(make_kit: MakeKit) -> None:
    kit = make_kit(sandbox={"max_output_chars": 1000})
    text = await kit.text("bash", description="d", command="seq 1 5000")
    assert "[output truncated" in text
    assert text.endswith("[exit code: 0]")
    assert len(text) < 1500


async def test_timeout_is_reported(make_kit: MakeKit) -> None:
    kit = make_kit(sandbox={"command_timeout_s": 0.5})
    text = await kit.text("bash", description="d", command="echo start; sleep 20")
    assert "start" in text
    assert "[timed out after 0.5s: the command was killed]" in text
    assert "bash" in kit.tools and "killed after 0.5s" in kit.tools["bash"].description


async def test_empty_command_is_an_error(kit: ToolKit) -> None:
    assert "empty" in await kit.error("bash", description="d", command="   ")


@pytest.mark.skipif(bw.find_bwrap() is None, reason="bwrap is not installed")
async def test_bwrap_sandbox(make_kit: MakeKit) -> None:
    kit = make_kit(sandbox={"isolation": "bwrap"})
    text = await kit.text(
        "bash", description="d", command="pwd; ls /mnt/user-data; cat /etc/hostname >/dev/null"
    )
    assert text.splitlines()[0] == "/mnt/user-data/workspace"
    assert "outputs" in text
