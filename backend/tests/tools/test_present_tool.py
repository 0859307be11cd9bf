"""present_files: state update with artifacts; refusals for anything outside outputs."""

from __future__ import annotations

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from tools.conftest import ToolKit

OUT = "/mnt/user-data/outputs"


async def _make(kit: ToolKit) -> None:
    await kit.text("write_file", description="d", path=f"{OUT}/report.md", content="# r\n")
    await kit.text("write_file", description="d", path=f"{OUT}/data.csv", content="a,b\n")
    await kit.text("write_file", description="d", path="/mnt/user-data/uploads/u.txt", content="u")


async def test_presents_files_as_artifacts(kit: ToolKit) -> None:
    await _make(kit)
    result = await kit.call(
        "present_files", filepaths=[f"{OUT}/report.md", f"{OUT}/data.csv", f"{OUT}/report.md"]
    )
    assert isinstance(result, Command) and result.update is not None
    assert result.update["artifacts"] == [f"{OUT}/report.md", f"{OUT}/data.csv"]
    (msg,) = result.update["messages"]
    assert isinstance(msg, ToolMessage) and msg.status == "success"
    assert msg.tool_call_id.startswith("call-")
    assert "Presented 2 file(s)" in msg.content


async def test_partial_refusal_keeps_the_good_files(kit: ToolKit) -> None:
    await _make(kit)
    result = await kit.call(
        "present_files", filepaths=[f"{OUT}/report.md", "/mnt/user-data/uploads/u.txt"]
    )
    assert isinstance(result, Command) and result.update is not None
    assert result.update["artifacts"] == [f"{OUT}/report.md"]
    assert "Not presented" in result.update["messages"][0].content
    assert "only files under /mnt/user-data/outputs" in result.update["messages"][0].content


async def test_refusals(kit: ToolKit) -> None:
    await _make(kit)
    (kit.paths.outputs / "passwd").symlink_to("/etc/passwd")
    (kit.paths.outputs / "folder").mkdir()
    cases = {
        "/etc/passwd": "Access denied",
        f"{OUT}/../../../etc/passwd": "Access denied",
        f"{OUT}/passwd": "Access denied",
        f"{OUT}/missing.md": "does not exist",
        f"{OUT}/folder": "not a regular file",
        "/mnt/user-data/uploads/u.txt": "cannot be presented",
    }
    for path, expected in cases.items():
        err = await kit.error("present_files", filepaths=[path])
        assert expected in err, (path, err)
        assert "Nothing presented" in err
    assert "empty" in await kit.error("present_files", filepaths=[])
