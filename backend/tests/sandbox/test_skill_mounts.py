"""Skills mounted read-only at /mnt/skills/...: the file tools read them and refuse writes;
under bwrap commands read them and cannot write; links out of a skill are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox import LocalSandbox, LocalSandboxProvider
from pronghorn.sandbox.errors import PathDeniedError, SandboxError
from pronghorn.sandbox.mounts import ReadOnlyMount

from .conftest import needs_bwrap

V = "/mnt/skills/public/charts"


class Source:
    """A MountSource with fixed mounts per user."""

    def __init__(self, mounts: dict[str, tuple[ReadOnlyMount, ...]]) -> None:
        self.mounts = mounts
        self.asked: list[str] = []

    async def mounts_for(self, user_id: str) -> tuple[ReadOnlyMount, ...]:
        self.asked.append(user_id)
        return self.mounts.get(user_id, ())


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "skills" / "charts"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: charts\ndescription: d\n---\nline two\nline three\n"
    )
    (folder / "scripts" / "chart.py").write_text("print('chart')\n")
    (tmp_path / "secret.txt").write_text("host secret")
    (folder / "leak").symlink_to(tmp_path / "secret.txt")
    return folder


async def _sandbox(
    data_dir: Path, skill_dir: Path, isolation: str, thread_id: str
) -> tuple[LocalSandbox, Source]:
    source = Source({"alice": (ReadOnlyMount(V, skill_dir),)})
    config = AppConfig.model_validate(
        {"data_dir": str(data_dir), "sandbox": {"isolation": isolation, "command_timeout_s": 20}}
    )
    provider = LocalSandboxProvider(config, mounts=source)
    sb = await provider.acquire("alice", thread_id)
    assert isinstance(sb, LocalSandbox)
    return sb, source


async def test_file_tools_read_but_never_write(data_dir, skill_dir, thread_id):
    sb, source = await _sandbox(data_dir, skill_dir, "none", thread_id)
    assert source.asked == ["alice"]
    assert (await sb.read_file(f"{V}/SKILL.md", 5, 6)) == "line two\nline three\n"
    assert f"{V}/scripts/" in await sb.list_dir(V)
    assert await sb.glob("**/*.py", V) == [f"{V}/scripts/chart.py"]
    assert await sb.grep("chart", V, "*.py") == [f"{V}/scripts/chart.py:1: print('chart')"]
    with pytest.raises(PathDeniedError, match="read-only"):
        await sb.write_file(f"{V}/SKILL.md", "x")
    with pytest.raises(PathDeniedError, match="read-only"):
        await sb.str_replace(f"{V}/SKILL.md", "line", "LINE")
    with pytest.raises(PathDeniedError, match="outside the skill"):
        await sb.read_file(f"{V}/leak")
    with pytest.raises(PathDeniedError, match="outside the skill"):
        await sb.read_file(f"{V}/scripts/../leak")
    with pytest.raises(PathDeniedError):  # '..' is resolved by name first: never a way out
        await sb.read_file(f"{V}/../../../etc/passwd")
    with pytest.raises(SandboxError, match="File not found"):
        await sb.read_file(f"{V}/nope.md")
    assert "leak" not in " ".join(await sb.list_dir(V))
    assert (skill_dir / "SKILL.md").read_text().startswith("---\nname: charts")


async def test_other_users_and_unknown_paths_see_no_skills(data_dir, skill_dir, thread_id):
    source = Source({"alice": (ReadOnlyMount(V, skill_dir),)})
    provider = LocalSandboxProvider(
        AppConfig.model_validate({"data_dir": str(data_dir), "sandbox": {"isolation": "none"}}),
        mounts=source,
    )
    bob = await provider.acquire("bob", thread_id)
    with pytest.raises(PathDeniedError):
        await bob.read_file(f"{V}/SKILL.md")


async def test_isolation_none_rewrites_skill_paths_in_commands(data_dir, skill_dir, thread_id):
    sb, _ = await _sandbox(data_dir, skill_dir, "none", thread_id)
    result = await sb.execute(f"python3 {V}/scripts/chart.py && ls {V}")
    assert result.exit_code == 0 and result.stdout.startswith("chart\n")
    assert str(skill_dir) not in result.stdout


@needs_bwrap
async def test_bwrap_mounts_skills_read_only(data_dir, skill_dir, thread_id):
    sb, _ = await _sandbox(data_dir, skill_dir, "bwrap", thread_id)
    result = await sb.execute(f"cat {V}/SKILL.md && python3 {V}/scripts/chart.py")
    assert result.exit_code == 0, result.stderr
    assert "name: charts" in result.stdout and "chart" in result.stdout
    denied = await sb.execute(f"echo x > {V}/SKILL.md; touch {V}/new; echo rc=$?")
    assert "Read-only file system" in denied.stderr and "rc=1" in denied.stdout
    assert not (skill_dir / "new").exists()
    assert (skill_dir / "SKILL.md").read_text().startswith("---")
    leak = await sb.execute(f"cat {V}/leak")
    assert "host secret" not in leak.stdout  # the link's target is not in the sandbox
