"""The response shapes DeerFlow's frontend reads, written from its TypeScript types
(`frontend/src/core/auth/types.ts`, `core/scheduled-tasks/types.ts`,
`core/workspace-changes/types.ts`), as {field: allowed JSON types}."""

from __future__ import annotations

from typing import Any

STR = (str,)
OPT_STR = (str, type(None))
BOOL = (bool,)
INT = (int,)

# core/auth/types.ts userSchema
USER = {"id": STR, "email": STR, "system_role": STR, "needs_setup": BOOL}
USER_ROLES = {"admin", "user"}
# core/auth/setup.ts SetupStatusResponse
SETUP_STATUS = {"needs_setup": BOOL, "registration_enabled": BOOL}


def check_shape(value: Any, shape: dict[str, tuple[type, ...]]) -> None:
    """Every field the type names is present with an allowed type (bool is not an int)."""
    assert isinstance(value, dict), value
    for name, types in shape.items():
        assert name in value, f"missing {name!r} in {value}"
        got = value[name]
        ok = isinstance(got, types) and not (isinstance(got, bool) and bool not in types)
        assert ok, f"{name!r}: {got!r} is not {types}"


# zod's `z.string().email()` pattern (userSchema.email): what DeerFlow's SSR accepts
ZOD_EMAIL = (
    r"^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]"
    r"@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$"
)

# core/scheduled-tasks/types.ts ScheduledTask
SCHEDULED_TASK = {
    "id": STR,
    "thread_id": OPT_STR,
    "context_mode": STR,
    "title": STR,
    "prompt": STR,
    "schedule_type": STR,
    "schedule_spec": (dict,),
    "timezone": STR,
    "status": STR,
    "next_run_at": OPT_STR,
    "last_run_at": OPT_STR,
    "last_run_id": OPT_STR,
    "last_thread_id": OPT_STR,
    "last_error": OPT_STR,
    "run_count": INT,
    "created_at": STR,
    "updated_at": STR,
}
TASK_STATUSES = {"enabled", "paused", "running", "completed", "failed", "cancelled"}
# ScheduledTaskRun
SCHEDULED_TASK_RUN = {
    "id": STR,
    "task_id": STR,
    "thread_id": STR,
    "run_id": OPT_STR,
    "scheduled_for": STR,
    "trigger": STR,
    "status": STR,
    "error": OPT_STR,
    "started_at": OPT_STR,
    "finished_at": OPT_STR,
    "created_at": STR,
}
TASK_RUN_STATUSES = {"queued", "running", "success", "failed", "skipped", "interrupted"}

# core/workspace-changes/types.ts
WORKSPACE_CHANGES = {
    "available": BOOL,
    "version": INT,
    "summary": (dict,),
    "files": (list,),
    "limits": (dict,),
}
WORKSPACE_SUMMARY = {
    "created": INT,
    "modified": INT,
    "deleted": INT,
    "symlink_created": INT,
    "additions": INT,
    "deletions": INT,
    "truncated": BOOL,
}
OPT_INT = (int, type(None))
WORKSPACE_FILE = {
    "path": STR,
    "root": STR,
    "status": STR,
    "binary": BOOL,
    "sensitive": BOOL,
    "size_before": OPT_INT,
    "size_after": OPT_INT,
    "sha256_before": OPT_STR,
    "sha256_after": OPT_STR,
    "diff": STR,
    "diff_truncated": BOOL,
    "diff_unavailable_reason": OPT_STR,
    "additions": INT,
    "deletions": INT,
    "symlink": BOOL,
    "symlink_target_before": OPT_STR,
    "symlink_target_after": OPT_STR,
}
FILE_STATUSES = {"created", "modified", "deleted", "symlink_created"}
DIFF_REASONS = {None, "binary", "large", "sensitive", "truncated", "symlink"}
