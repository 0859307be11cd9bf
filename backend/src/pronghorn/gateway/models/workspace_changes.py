"""DeerFlow's workspace-changes shapes (its `core/workspace-changes/types.ts`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class WorkspaceChangeSummary(BaseModel):
    created: int
    modified: int
    deleted: int
    symlink_created: int
    additions: int
    deletions: int
    truncated: bool


class WorkspaceFileChange(BaseModel):
    path: str
    root: str
    status: Literal["created", "modified", "deleted", "symlink_created"]
    binary: bool
    sensitive: bool
    size_before: int | None
    size_after: int | None
    sha256_before: str | None
    sha256_after: str | None
    diff: str
    diff_truncated: bool
    diff_unavailable_reason: Literal["binary", "large", "sensitive", "truncated", "symlink"] | None
    additions: int
    deletions: int
    symlink: bool
    symlink_target_before: str | None
    symlink_target_after: str | None


class WorkspaceChanges(BaseModel):
    available: bool
    version: int
    summary: WorkspaceChangeSummary
    files: list[WorkspaceFileChange]
    limits: dict[str, object]
