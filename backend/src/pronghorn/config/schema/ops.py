"""`metrics`, `tracing` and `rate_limits`: what an operator sees and how hard one user may
push (see docs/operations.md)."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MetricsConfig(_Section):
    """`GET /metrics` in the Prometheus text format."""

    enabled: bool = Field(default=True, description="Serve /metrics (startup-only).")
    port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description=(
            "Serve /metrics on this port instead (a plain listener of its own, on "
            "metrics.host); the main port then answers 404 there (startup-only)."
        ),
    )
    host: str = Field(
        default="127.0.0.1", description="Interface of the metrics.port listener (startup-only)."
    )
    token: SecretStr | None = Field(
        default=None,
        description=(
            "A bearer credential Prometheus sends (`authorization: {credentials: ...}`). "
            "Unset: on the main port an admin's credentials are needed (anyone when "
            "auth.mode is none); on metrics.port nothing is asked."
        ),
    )

    @field_validator("token")
    @classmethod
    def _empty_is_unset(cls, value: SecretStr | None) -> SecretStr | None:
        # `PRONGHORN_METRICS__TOKEN=` (empty) in an .env means no token, not "".
        return value if value is None or value.get_secret_value() else None


class OtlpConfig(_Section):
    endpoint: str | None = Field(
        default=None,
        description=(
            "OTLP/HTTP collector base URL (e.g. http://otel-collector:4318; /v1/traces is "
            "appended unless the URL already names it). Unset: no spans are exported."
        ),
    )
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="Extra headers for the collector (e.g. an API key)."
    )
    timeout_s: float = Field(default=10.0, gt=0, description="Timeout of one export.")

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value


class LangSmithConfig(_Section):
    api_key: SecretStr = Field(description="LangSmith API key; use ${VAR}.")
    project: str = Field(default="pronghorn", description="Project the runs are logged to.")
    endpoint: str | None = Field(default=None, description="API URL (default: LangSmith's cloud).")


class LangfuseConfig(_Section):
    public_key: SecretStr = Field(description="Langfuse public key.")
    secret_key: SecretStr = Field(description="Langfuse secret key; use ${VAR}.")
    host: str | None = Field(default=None, description="Langfuse URL (default: its cloud).")


class TracingConfig(_Section):
    """OpenTelemetry spans, and optional LangSmith / Langfuse callbacks on every run."""

    service_name: str = Field(
        default="pronghorn", description="`service.name` of the spans (startup-only)."
    )
    sample_ratio: float = Field(
        default=1.0, ge=0, le=1, description="Share of traces kept (startup-only)."
    )
    otlp: OtlpConfig = Field(default_factory=OtlpConfig, description="Exporter (startup-only).")
    langsmith: LangSmithConfig | None = Field(
        default=None,
        description="Send every run to LangSmith (session = thread, user = owner); null: off.",
    )
    langfuse: LangfuseConfig | None = Field(
        default=None,
        description=(
            "Send every run to Langfuse (session = thread, user = owner); needs the "
            "`langfuse` package installed; null: off."
        ),
    )


class RateLimitsConfig(_Section):
    """Per-user request rate limits on /api/ (a token bucket per principal)."""

    requests_per_second: float | None = Field(
        default=None,
        gt=0,
        description="Sustained requests per second of one user; null: no limit.",
    )
    burst: int = Field(
        default=60, ge=1, description="Requests one user may make at once above the rate."
    )
    backend: Literal["auto", "memory", "redis"] = Field(
        default="auto",
        description=(
            "Where buckets live: memory (per process: behind N replicas a user gets N "
            "times the rate), redis (shared by every replica, at broker.redis_url, under "
            "broker.key_prefix), or auto: redis when broker.kind is redis, else memory."
        ),
    )
