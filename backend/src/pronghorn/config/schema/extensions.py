"""`skills:` and `tools:`: the agent's configurable extension surface (hot-reloaded)."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

_IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
TOOL_GROUPS = ("file", "shell", "web", "interaction")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SkillsConfig(_Section):
    """Where skills are discovered and how `.skill` archives are installed."""

    public_path: str | None = Field(
        default=None,
        description=(
            "Folder of the shipped skills (mounted at /mnt/skills/public). Default: the "
            "repository's skills/public folder. Relative paths are taken from the config file's "
            "folder."
        ),
    )
    path: list[str] = Field(
        default_factory=list,
        description=(
            "Extra folders of skills (each holds one folder per skill), listed as public skills "
            "after the shipped ones; a name already seen is skipped."
        ),
    )
    max_install_bytes: int = Field(
        default=10 * 1024 * 1024,
        ge=1024,
        description="Largest `.skill` archive, and largest total unpacked size, accepted.",
    )
    max_install_files: int = Field(
        default=200, ge=1, description="Most files a `.skill` archive may hold."
    )
    scan_scripts: bool = Field(
        default=True,
        description=(
            "Refuse an archive whose scripts match the static scan for dangerous patterns "
            "(reverse shells, `rm -rf /`, credential theft, pipes from the network into a shell)."
        ),
    )


class ExtraTool(_Section):
    """A LangChain tool added by import path."""

    use: str = Field(
        description=(
            "`module:attr` of a LangChain `BaseTool`, a list of them, a function decorated with "
            "`@tool`, or a factory returning one of those."
        )
    )
    group: str = Field(default="custom", description="The tool group it belongs to.")

    @field_validator("use")
    @classmethod
    def _import_path(cls, value: str) -> str:
        if not _IMPORT_PATH.fullmatch(value):
            raise ValueError(f"{value!r} is not an import path of the form module:attr")
        return value


class ToolsConfig(_Section):
    """Which tools the lead agent gets. Names and group names mix freely in the lists."""

    enabled: list[str] | None = Field(
        default=None,
        description=(
            "Allow-list of tool names or groups (`file`, `shell`, `web`, `interaction`, "
            "`custom`); null: every tool."
        ),
    )
    disabled: list[str] = Field(
        default_factory=list, description="Tool names or groups that are never offered."
    )
    extra: list[ExtraTool] = Field(
        default_factory=list, description="LangChain tools added by import path."
    )
    timeouts: dict[str, float] = Field(
        default_factory=dict,
        description=(
            "Per-tool wall-clock timeout in seconds, by tool name; a call that runs longer is "
            "stopped and the model reads a timeout error."
        ),
    )

    @field_validator("timeouts")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        for name, seconds in value.items():
            if seconds <= 0:
                raise ValueError(f"timeout of {name!r} must be positive")
        return value
