"""What the gateway and the sandbox agent say to each other: request bodies (pydantic,
``extra="forbid"``) and the error kinds of a refused request."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

API_PREFIX = "/v1"
HEALTH_PATH = "/healthz"

# Environment variables of the agent (set in the pod spec).
ENV_TOKEN = "PRONGHORN_SANDBOX_TOKEN"
ENV_ROOT = "PRONGHORN_SANDBOX_ROOT"
ENV_SCOPE = "PRONGHORN_SANDBOX_SCOPE"
ENV_HOST = "PRONGHORN_SANDBOX_HOST"
ENV_PORT = "PRONGHORN_SANDBOX_PORT"

ErrorKind = Literal["path_denied", "sandbox", "unauthorized", "bad_request"]

# Most bytes of one request body the agent reads (a write_file of a large file).
MAX_BODY_BYTES = 64 * 1024 * 1024


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # The thread whose folders the call works in; required when the pod serves a user.
    thread_id: str | None = None


class ExecLimits(BaseModel):
    """rlimits of one command (None: not limited that way); the pod's own cgroup limits
    CPU, memory and its processes as a whole."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    processes: int | None = Field(default=None, ge=1)
    cpu_seconds: int | None = Field(default=None, ge=1)
    file_size_bytes: int | None = Field(default=None, ge=0)


class ExecRequest(_Body):
    command: str = Field(min_length=1)
    timeout_s: float = Field(gt=0)
    max_output_chars: int = Field(ge=1000)
    limits: ExecLimits = Field(default_factory=ExecLimits)


class ExecResponse(BaseModel):
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool


class ReadRequest(_Body):
    path: str
    start_line: int | None = None
    end_line: int | None = None
    max_chars: int = Field(ge=1)


class WriteRequest(_Body):
    path: str
    content: str
    append: bool = False


class ReplaceRequest(_Body):
    path: str
    old: str
    new: str
    replace_all: bool = False


class ListRequest(_Body):
    path: str
    max_depth: int = Field(default=2, ge=1)


class GlobRequest(_Body):
    pattern: str
    path: str | None = None


class GrepRequest(_Body):
    pattern: str
    path: str | None = None
    glob: str | None = None
    max_matches: int = Field(default=200, ge=1)


class ErrorBody(BaseModel):
    error: ErrorKind
    detail: str
