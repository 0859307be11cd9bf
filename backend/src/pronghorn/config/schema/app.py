"""The typed, immutable shape of ``config.yaml``.

Every section is a frozen pydantic model with ``extra="forbid"`` so a typo fails loudly with
the key's path. Defaults are chosen so that Pronghorn runs with no config file at all.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from pronghorn.config.hosts import check_host_pattern
from pronghorn.config.schema.channels import ChannelsConfig
from pronghorn.config.schema.extensions import SkillsConfig, ToolsConfig
from pronghorn.config.schema.governance import (
    ApprovalsConfig,
    BudgetsConfig,
    GuardrailsConfig,
    ModelPricing,
    SuggestionsConfig,
)
from pronghorn.config.schema.kubernetes import SandboxKubernetesConfig
from pronghorn.config.schema.mcp import McpConfig
from pronghorn.config.schema.memory import MemoryConfig
from pronghorn.config.schema.oidc import OidcConfig
from pronghorn.config.schema.ops import MetricsConfig, RateLimitsConfig, TracingConfig
from pronghorn.config.schema.protocols import ProtocolsConfig
from pronghorn.config.schema.subagents import SubagentsConfig


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerConfig(Section):
    """HTTP server settings (startup-only)."""

    host: str = Field(default="127.0.0.1", description="Interface to bind.")
    port: int = Field(default=2026, ge=1, le=65535, description="TCP port to bind.")
    workers: int = Field(default=1, ge=1, le=64, description="uvicorn worker processes.")
    keep_alive_s: float = Field(
        default=65.0,
        gt=0,
        description=(
            "Idle keep-alive timeout of client connections; longer than clients' own (httpx: "
            "5 s) so a reused connection is never closed under a request."
        ),
    )
    docs_enabled: bool = Field(default=True, description="Serve the OpenAPI UI at /docs.")
    cors_origins: list[str] = Field(
        default_factory=list,
        description=(
            "Origins allowed by CORS (and trusted for state-changing requests, see "
            "docs/api.md); empty disables CORS."
        ),
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description=(
            "Host names clients use to reach the server, besides localhost, 127.0.0.1 and "
            "[::1] (always allowed); a request for any other Host gets 400 (DNS rebinding). "
            "'*.example.com' matches subdomains; '*' turns the check off."
        ),
    )
    max_body_bytes: int = Field(
        default=8 * 1024 * 1024,
        ge=1024,
        description=(
            "Largest request body (JSON endpoints) in bytes; larger answers 413. Uploads "
            "have their own limits (uploads.*)."
        ),
    )
    max_header_bytes: int = Field(
        default=32 * 1024,
        ge=4096,
        description="Largest request line plus headers in bytes; larger is refused.",
    )
    max_header_count: int = Field(
        default=100, ge=10, description="Most request headers; more answers 431."
    )
    static_dir: str | None = Field(
        default=None,
        description="Folder with the built web UI; default: frontend/dist in the repo.",
    )
    reload_graphs: bool = Field(
        default=False,
        description=(
            "Re-import a graph when its source file changes, without a restart (on by "
            "default under `pronghorn serve --reload`, i.e. `make dev`). Changes to `graphs:` "
            "itself always apply live."
        ),
    )

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, hosts: list[str]) -> list[str]:
        return [check_host_pattern(h) for h in hosts]


class HttpConfig(Section):
    """Custom HTTP routes served beside the API, like `http` in a langgraph.json
    (startup-only)."""

    app: str | None = Field(
        default=None,
        description=(
            "A Starlette or FastAPI app, 'package.module:attr' or './file.py:attr' (relative "
            "to the config file), whose routes are served beside the API: they take "
            "precedence over built-in routes with the same path and method, run behind "
            "Pronghorn's own middleware, and (for FastAPI) are listed in /openapi.json. The "
            "app's own middleware, exception handlers and lifespan apply to its routes."
        ),
    )


class DatabaseConfig(Section):
    """Where runs, threads, checkpoints and the store live (startup-only)."""

    url: str | None = Field(
        default=None,
        description=(
            "SQLAlchemy URL. Default: sqlite:///<data_dir>/pronghorn.db "
            "(sqlite+aiosqlite:// is accepted too). "
            "PostgreSQL: postgresql://user:pass@host:5432/db (the app's tables on asyncpg, "
            "the checkpointer on psycopg, whichever driver the URL names)."
        ),
    )
    pool_size: int = Field(
        default=10, ge=1, le=200, description="Connection pool size (PostgreSQL)."
    )
    pool_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description=(
            "PostgreSQL: how long an operation waits for a pooled connection (every one busy, "
            "or none can be opened while the database is away) before it fails; requests then "
            "get a 503, and a finished run's settle tries again until the database is back."
        ),
    )
    idle_in_transaction_timeout_s: float = Field(
        default=5.0,
        ge=0,
        le=3600,
        description=(
            "PostgreSQL: the server ends a gateway session that sat this long inside a "
            "transaction (idle_in_transaction_session_timeout), so a replica that froze "
            "holding row locks cannot stall the others' lease recovery. Keep it below "
            "runs.lease_s. 0: no limit."
        ),
    )
    statement_timeout_s: float | None = Field(
        default=None,
        ge=0,
        le=3600,
        description=(
            "PostgreSQL: the server cancels any statement of a gateway session (both pools) "
            "that runs longer than this (statement_timeout), ending its transaction: it also "
            "ends a session frozen half-way through sending a statement, which "
            "idle_in_transaction_timeout_s does not reach, so a frozen replica's row locks "
            "are freed before its runs' leases expire. null: half of runs.lease_s. 0: no "
            "limit. Migrations run without it."
        ),
    )
    busy_timeout_ms: int = Field(default=5000, ge=0, description="SQLite busy_timeout.")
    echo: bool = Field(default=False, description="Log every SQL statement.")


class BrokerConfig(Section):
    """Where run events and cancel signals travel (startup-only)."""

    kind: Literal["memory", "redis"] = Field(
        default="memory",
        description=(
            "memory: the in-process broker (one process). redis: Redis Streams and pub/sub, "
            "so several gateway processes share run events, thread streams and cancels."
        ),
    )
    redis_url: str = Field(
        default="redis://127.0.0.1:6379/0", description="Redis URL (kind=redis)."
    )
    key_prefix: str = Field(
        default="pronghorn",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="Prefix of every Redis key and channel (several deployments, one Redis).",
    )
    run_cache_events: int = Field(
        default=10_000,
        ge=1,
        description="Events of one run kept in its Redis stream; older ones the database "
        "has stored are trimmed (readers read those from the database).",
    )
    thread_cache_events: int = Field(
        default=1_000, ge=1, description="Events kept in a thread's Redis stream (live only)."
    )
    stream_ttl_s: int = Field(
        default=3600, ge=10, description="A run or thread stream with no new event expires."
    )
    finished_ttl_s: int = Field(
        default=60, ge=1, description="How long a finished run's stream stays in Redis."
    )
    retry_s: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="How long a stream retries a lost Redis connection before it ends with "
        "an error event (new requests get 503 meanwhile).",
    )


class RunsConfig(Section):
    """Run engine behaviour."""

    max_concurrency: int = Field(
        default=64, ge=1, description="Runs executing at once; more queue."
    )
    timeout_s: float = Field(default=3600.0, gt=0, description="Wall-clock limit of one run.")
    recover: Literal["error", "resume"] = Field(
        default="error", description="What to do with runs left in flight by a dead process."
    )
    drain_timeout_s: float = Field(
        default=10.0, ge=0, description="How long shutdown waits for in-flight runs."
    )
    settle_wait_s: float = Field(
        default=300.0,
        gt=0,
        le=86400,
        description=(
            "PostgreSQL: how long a run whose last writes (its checkpoints, events and final "
            "status) meet an unreachable database waits for it to record its real outcome. "
            "Past it the run is recorded `error` (DatabaseUnavailable) as soon as the "
            "database is back, never left `running`. /ready shows the runs waiting "
            "(settles_waiting); shutdown ends the wait (the next start recovers them)."
        ),
    )
    durability: Literal["sync", "async", "exit"] = Field(
        default="async",
        description=(
            "Default checkpoint durability, LangGraph's own default: async (a checkpoint after "
            "each step, written in the background). Opt-ins: sync (each step, before the "
            "next; nothing of a finished step is lost) or exit (only when the run ends, also "
            "on error, interrupt or cancel: fewer writes, but no per-step history, so "
            "regenerate/fork and a page reloaded mid-run see less). See docs/performance.md."
        ),
    )
    max_queued: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Runs that may wait for a slot at once (all users); a run that would wait "
            "beyond it is refused with 429 and Retry-After. Scale-out (PostgreSQL + Redis) "
            "it counts the cluster's queue: the runs no replica has claimed yet. null: no cap."
        ),
    )
    max_concurrency_per_user: int | None = Field(
        default=None,
        ge=1,
        description="Runs of one user executing at once; more wait. null: no cap.",
    )
    max_queued_per_user: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Runs of one user that may wait at once; more answer 429. Scale-out it counts "
            "the user's runs no replica has claimed yet. null: no cap."
        ),
    )
    max_queue_wait_s: float | None = Field(
        default=None,
        gt=0,
        description=(
            "Longest a run waits for its slot (after any after_seconds delay); then it ends "
            "`error` (QueueTimeout) without starting. Scale-out a run unclaimed that long "
            "(since it was accepted, came due or went back to the queue) is ended by a "
            "replica's lease sweeper, within about runs.lease_s / 3. null: no bound."
        ),
    )
    lease_s: float = Field(
        default=10.0,
        ge=1.0,
        le=600.0,
        description=(
            "Scale-out (PostgreSQL + Redis): how long a replica's claim on an executing run "
            "holds without a heartbeat (renewed every third of it). A run whose lease "
            "expired (its replica died or froze) is recovered by another replica "
            "(runs.recover) within about lease_s plus a third of it."
        ),
    )
    queue_poll_s: float = Field(
        default=2.0,
        gt=0,
        le=60.0,
        description=(
            "Scale-out: how often an idle replica looks for claimable runs when no work "
            "notice arrived (a safety net; new runs wake the replicas at once)."
        ),
    )
    cluster_max_concurrency: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Scale-out: runs executing at once across all replicas (max_concurrency caps "
            "each replica). null: no cluster-wide cap."
        ),
    )
    idempotency_ttl_s: float = Field(
        default=86400.0,
        ge=0,
        le=30 * 86400,
        description=(
            "How long an Idempotency-Key on a creating request (runs, threads, assistants) "
            "is remembered, per user: a retry with the same key and body within it gets the "
            "first request's result instead of creating again. 0: the header is ignored."
        ),
    )
    webhook_timeout_s: float = Field(default=10.0, gt=0, description="Timeout of one webhook call.")
    webhook_retries: int = Field(default=3, ge=0, le=10, description="Webhook retries on failure.")
    webhook_allow_private_addresses: bool = Field(
        default=False,
        description=(
            "Let run webhooks reach loopback/private hosts (cloud metadata stays refused). "
            "Off: a webhook is an address the client picks, so it must not reach the "
            "gateway's own network."
        ),
    )


class StreamingConfig(Section):
    """SSE and the per-run event log."""

    heartbeat_s: float = Field(
        default=5.0, gt=0, description="Seconds between `: heartbeat` comments."
    )
    run_retention_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=1024,
        description="Event bytes cached in memory per run (every event is kept in the "
        "database; readers past the cache read it from there).",
    )
    total_retention_bytes: int = Field(
        default=128 * 1024 * 1024,
        ge=1024,
        description="Event bytes cached in memory across all runs.",
    )


class StoreTTLConfig(Section):
    default_ttl_minutes: float | None = Field(
        default=None, description="TTL of items put without one."
    )
    refresh_on_read: bool = Field(default=True, description="Reading an item refreshes its TTL.")
    sweep_interval_minutes: int = Field(default=5, ge=1, description="Expired-item sweep period.")


class StoreConfig(Section):
    ttl: StoreTTLConfig = Field(default_factory=StoreTTLConfig)


class LoggingConfig(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Log level."
    )
    format: Literal["json", "text"] = Field(
        default="text", description="One JSON object or text a line."
    )


FallbackReason = Literal["auth", "bad_request", "context_length", "error"]


class ModelThinking(Section):
    """Per-model thinking switches, so one fallback chain can mix thinking and plain models:
    the options merged into the model's `options` when thinking is on or off."""

    enabled_by_default: bool = Field(
        default=False, description="Thinking when a run does not say (context.thinking_enabled)."
    )
    # Any: model options are the model class's keyword arguments, of any type
    when_enabled: dict[str, Any] = Field(
        default_factory=dict, description="Extra model options while thinking is on."
    )
    when_disabled: dict[str, Any] = Field(  # Any: as when_enabled
        default_factory=dict, description="Extra model options while thinking is off."
    )


class ModelConfig(Section):
    """One chat model the agent may use."""

    name: str = Field(description="Id used by runs (context.model_name).")
    display_name: str | None = Field(default=None, description="Label shown in the UI.")
    provider: str = Field(
        default="openai",
        description="openai (any OpenAI-compatible API), anthropic, scripted, or module:Class.",
    )
    model: str = Field(default="", description="Provider's model name.")
    api_key: SecretStr | None = Field(default=None, description="API key; use ${VAR}.")
    base_url: str | None = Field(default=None, description="Endpoint base URL.")
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    timeout_s: float = Field(default=120.0, gt=0, description="Request timeout.")
    stream_chunk_timeout_s: float = Field(
        default=240.0,
        gt=0,
        description="Max gap between streamed chunks (thinking models pause long).",
    )
    max_retries: int = Field(
        default=2,
        ge=0,
        le=10,
        description="Retries of one model call on 429/5xx/timeouts, by the agent's retry "
        "middleware (the provider SDK's own retries are off).",
    )
    supports_vision: bool = False
    supports_thinking: bool = False
    thinking_budget_tokens: int | None = Field(
        default=None, ge=1, description="Anthropic thinking."
    )
    reasoning_effort: Literal["low", "medium", "high"] | None = Field(
        default=None, description="OpenAI reasoning effort."
    )
    # Any: script steps and rules are validated by the scripted model (models/steps.py)
    script: list[dict[str, Any]] | None = Field(
        default=None, description="Steps for provider=scripted (see docs/models.md)."
    )
    rules: list[dict[str, Any]] | None = Field(  # Any: as script
        default=None, description="Rules for provider=scripted: match the last user message."
    )
    options: dict[str, Any] = Field(  # Any: the model class's keyword arguments, of any type
        default_factory=dict, description="Extra keyword arguments for the model class."
    )
    pricing: ModelPricing | None = Field(
        default=None, description="Price of the model, for cost budgets and usage."
    )
    fallbacks: list[str] | None = Field(
        default=None,
        description=(
            "Models that take over a call this model failed with a retryable error (5xx, "
            "429, timeout, connection, overloaded) after its own retries, in order. null: "
            'agent.fallback_models; []: none. See docs/models.md, "Fallback chains".'
        ),
    )
    fallback_on: list[FallbackReason] = Field(
        default_factory=list,
        description=(
            "Non-retryable errors that fall back too: auth (401/403), bad_request (400, "
            "content policy), context_length, error (anything else). Default: none."
        ),
    )
    thinking: ModelThinking | None = Field(
        default=None,
        description="Thinking switches of this model (implies supports_thinking).",
    )


GIB = 1024**3


class SandboxLimitsConfig(Section):
    """Per-command resource limits (docs/sandbox.md, "Limits"); 0 turns one off. The
    sandbox provider reads them when the gateway starts."""

    processes: int = Field(
        default=256,
        ge=0,
        description=(
            "Most processes/threads a command may have at once (cgroup pids.max, else "
            "RLIMIT_NPROC; as root, under a per-sandbox host uid: see host_uid_base)."
        ),
    )
    memory_bytes: int = Field(
        default=2 * GIB,
        ge=0,
        description=(
            "Memory of a command: cgroup memory.max (all its processes together), else "
            "RLIMIT_AS (address space of each process)."
        ),
    )
    cpu_seconds: int = Field(
        default=600,
        ge=0,
        description="CPU time of each process (RLIMIT_CPU: SIGXCPU, then SIGKILL).",
    )
    cpu_cores: float = Field(
        default=1.0, ge=0, description="CPU bandwidth of a command in cores (cgroup cpu.max only)."
    )
    file_size_bytes: int = Field(
        default=1 * GIB, ge=0, description="Largest file a command may write (RLIMIT_FSIZE)."
    )
    workspace_quota_bytes: int = Field(
        default=5 * GIB,
        ge=0,
        description=(
            "Disk the thread's folders (workspace, uploads, outputs) may use; checked before "
            "and during each command (docs/sandbox.md)."
        ),
    )
    tmp_bytes: int = Field(
        default=512 * 1024 * 1024, ge=1024 * 1024, description="Size of the sandbox's private /tmp."
    )
    cgroup: Literal["auto", "off"] = Field(
        default="auto",
        description=(
            "auto: a per-command cgroup when /sys/fs/cgroup is writable here (startup-only); "
            "off: rlimits only."
        ),
    )
    seccomp: bool = Field(
        default=True, description="Run commands under the seccomp filter (bwrap isolation only)."
    )
    host_uid_base: int = Field(
        default=1_500_000_000,
        ge=0,
        le=4_294_000_000,
        description=(
            "Gateway running as root without a pids cgroup: each thread's commands run as host "
            "uid host_uid_base+1+(hash mod 65536), gid host_uid_base, so RLIMIT_NPROC binds "
            "(docs/sandbox.md). 0: off (such a host then refuses to run commands)."
        ),
    )

    @field_validator("host_uid_base")
    @classmethod
    def _above_real_users(cls, value: int) -> int:
        if 0 < value < 100_000:
            raise ValueError("must be 0 (off) or at least 100000, above the uids of real users")
        return value


class ContainerSandboxConfig(Section):
    """``sandbox.kind: container``: each thread's (or user's) commands run in a container
    made through the Docker Engine API (docs/sandbox.md, "Container sandbox")."""

    docker_url: str | None = Field(
        default=None,
        description=(
            "Docker Engine API address (unix:///var/run/docker.sock, tcp://host:2375); "
            "unset: DOCKER_HOST, else the local socket."
        ),
    )
    image: str = Field(
        default="pronghorn-sandbox:latest",
        description="Image of the sandbox containers (docker/sandbox.Dockerfile builds one).",
    )
    scope: Literal["thread", "user"] = Field(
        default="thread",
        description=(
            "thread: one container per thread, its folders at /mnt/user-data; user: one "
            "container per user, each command's /mnt/user-data rewritten to its thread."
        ),
    )
    network_name: str = Field(
        default="bridge",
        description="Docker network joined when sandbox.network is true (egress opt-in).",
    )
    max_containers: int = Field(
        default=32, ge=1, description="Live sandbox containers at most (this gateway)."
    )
    queue_timeout_s: float = Field(
        default=30.0,
        ge=0,
        description=(
            "At max_containers with every container busy, a command waits this long for one, "
            "then fails with a clear error."
        ),
    )
    warm_pool: int = Field(
        default=8,
        ge=0,
        description=(
            "Idle containers kept running for their thread's next command (warm start); "
            "beyond this many, the longest idle are removed."
        ),
    )
    idle_timeout_s: float = Field(
        default=600.0, gt=0, description="An idle container is removed after this long."
    )
    start_timeout_s: float = Field(
        default=60.0, gt=0, description="Creating and starting one container may take this long."
    )
    instance: str = Field(
        default="default",
        pattern=r"^[A-Za-z0-9_.-]{1,64}$",
        description=(
            "Label value naming this gateway's containers; replicas sharing one engine need "
            "distinct values."
        ),
    )
    orphans: Literal["adopt", "remove"] = Field(
        default="adopt",
        description=(
            "At start, containers this instance left running (a crash): adopt (reuse them when "
            "their spec still matches, remove the others) or remove them all."
        ),
    )


class SandboxConfig(Section):
    kind: Literal["local", "container", "kubernetes"] = Field(
        default="local",
        description=(
            "Sandbox provider (startup-only): local (bwrap or none), container (Docker Engine "
            "API) or kubernetes (a pod per thread)."
        ),
    )
    isolation: Literal["bwrap", "none"] = Field(
        default="bwrap",
        description="kind local: bwrap when installed; falls back to none with a warning.",
    )
    network: bool = Field(
        default=False,
        description="Allow network inside the sandbox (bwrap; container: joins network_name).",
    )
    command_timeout_s: float = Field(default=120.0, gt=0)
    max_output_chars: int = Field(default=30000, ge=1000)
    limits: SandboxLimitsConfig = Field(default_factory=SandboxLimitsConfig)
    container: ContainerSandboxConfig = Field(default_factory=ContainerSandboxConfig)
    kubernetes: SandboxKubernetesConfig = Field(default_factory=SandboxKubernetesConfig)


class UploadConvertConfig(Section):
    enabled: bool = True
    extensions: list[str] = Field(
        default_factory=lambda: ["pdf", "docx", "xlsx", "pptx", "html", "htm", "epub"]
    )
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    memory_bytes: int = Field(default=1024 * 1024 * 1024, ge=512 * 1024 * 1024)
    max_output_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)
    isolation: Literal["auto", "bwrap", "none"] = "auto"


class UploadsConfig(Section):
    max_file_bytes: int = Field(default=50 * 1024 * 1024, ge=1)
    max_total_bytes: int = Field(default=200 * 1024 * 1024, ge=1)
    convert: UploadConvertConfig = Field(default_factory=UploadConvertConfig)


class WebToolsConfig(Section):
    fetch_timeout_s: float = Field(default=15.0, gt=0)
    fetch_max_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)
    allow_private_addresses: bool = Field(
        default=False, description="Let web_fetch reach private/loopback hosts (tests only)."
    )
    search_provider: Literal["tavily", "searxng"] | None = None
    search_api_key: SecretStr | None = None
    search_base_url: str | None = None


class AgentConfig(Section):
    default_model: str | None = Field(default=None, description="Model used when a run names none.")
    fallback_models: list[str] = Field(
        default_factory=list,
        description=(
            "The fallback chain of every model without `fallbacks` of its own: models tried "
            "in order when a call fails with a retryable error after its retries."
        ),
    )
    title_max_chars: int = Field(default=60, ge=10)
    summarization_trigger_tokens: int = Field(default=60000, ge=1000)
    loop_warn_repeats: int = Field(default=3, ge=2)
    loop_stop_repeats: int = Field(default=5, ge=2)
    tool_output_soft_chars: int = Field(default=12000, ge=1000)
    tool_output_hard_chars: int = Field(default=30000, ge=1000)


class AuthConfig(Section):
    """Who may use the gateway (startup-only)."""

    mode: Literal["local", "none", "custom"] = Field(
        default="local",
        description=(
            "'local': users and API keys in the database; 'none': everyone is one local "
            "user (refused unless the server binds only to loopback); 'custom': a "
            "langgraph_sdk.Auth object named by auth.custom."
        ),
    )
    custom: str | None = Field(
        default=None, description="'./auth.py:auth' or 'package.module:auth' for auth.mode: custom."
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description=(
            "IPs or CIDR networks of reverse proxies whose X-Forwarded-For / "
            "X-Forwarded-Proto headers are believed (client IP for rate limits and the "
            "audit log, Secure cookies); empty: the direct peer is the client."
        ),
    )
    session_ttl_hours: float = Field(
        default=336.0,
        gt=0,
        description="Idle lifetime of a login session (sliding; default 14 days).",
    )
    max_failures_per_ip: int = Field(
        default=20,
        ge=1,
        description="Failed logins / API-key attempts per client IP in failure_window_s.",
    )
    max_failures_per_account: int = Field(
        default=5, ge=1, description="Failed logins per account in failure_window_s before 429."
    )
    failure_window_s: float = Field(
        default=300.0, gt=0, description="Window of the failure limits (seconds)."
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            try:
                ipaddress.ip_network(entry.strip(), strict=False)
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address or CIDR network") from None
        return [entry.strip() for entry in entries]

    oidc: OidcConfig | None = Field(
        default=None,
        description=(
            "Single sign-on with an OpenID Connect issuer (auth.mode: local); null: off. "
            "See docs/security.md."
        ),
    )

    @model_validator(mode="after")
    def _oidc_needs_local_users(self) -> AuthConfig:
        if self.oidc is not None and self.mode != "local":
            raise ValueError("auth.oidc signs users in to local accounts: set auth.mode: local")
        return self

    @model_validator(mode="after")
    def _custom_names_an_object(self) -> AuthConfig:
        if self.mode == "custom" and not self.custom:
            raise ValueError(
                "auth.mode custom needs auth.custom: the langgraph_sdk.Auth object, "
                "e.g. './auth.py:auth' or 'package.module:auth'"
            )
        if self.custom is not None and ":" not in self.custom:
            raise ValueError(
                f"auth.custom {self.custom!r} must look like './auth.py:auth' or "
                "'package.module:auth'"
            )
        return self


class AppConfig(Section):
    """The whole of config.yaml."""

    data_dir: str = Field(
        default=".pronghorn/data", description="Database, thread files (startup-only)."
    )
    server: ServerConfig = Field(default_factory=ServerConfig)
    auth: AuthConfig = Field(default_factory=AuthConfig)
    http: HttpConfig = Field(default_factory=HttpConfig)
    database: DatabaseConfig = Field(default_factory=DatabaseConfig)
    broker: BrokerConfig = Field(default_factory=BrokerConfig)
    runs: RunsConfig = Field(default_factory=RunsConfig)
    streaming: StreamingConfig = Field(default_factory=StreamingConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    graphs: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Extra graphs: id -> 'package.module:attr' or './file.py:attr'. Applied live: "
            "an added, changed or removed entry serves new runs within a second, without a "
            "restart (runs already accepted finish on the graph they were accepted with)."
        ),
    )
    models: list[ModelConfig] = Field(default_factory=list)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    uploads: UploadsConfig = Field(default_factory=UploadsConfig)
    web: WebToolsConfig = Field(default_factory=WebToolsConfig)
    subagents: SubagentsConfig = Field(default_factory=SubagentsConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    protocols: ProtocolsConfig = Field(default_factory=ProtocolsConfig)
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    guardrails: GuardrailsConfig = Field(default_factory=GuardrailsConfig)
    suggestions: SuggestionsConfig = Field(default_factory=SuggestionsConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    tracing: TracingConfig = Field(default_factory=TracingConfig)
    rate_limits: RateLimitsConfig = Field(default_factory=RateLimitsConfig)
