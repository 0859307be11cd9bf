"""The app's tables (SQLAlchemy Core). Checkpoints and store items live in the tables of the
LangGraph checkpointer and store, which manage their own schema."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB

metadata = MetaData()

Json = JSON().with_variant(JSONB(), "postgresql")
Ts = DateTime(timezone=True)

assistants = Table(
    "assistants",
    metadata,
    Column("assistant_id", String(64), primary_key=True),
    Column("graph_id", String(255), nullable=False, index=True),
    Column("name", String(255), nullable=False, default=""),
    Column("description", Text, nullable=True),
    Column("config", Json, nullable=False),
    Column("context", Json, nullable=False),
    Column("metadata", Json, nullable=False),
    Column("version", Integer, nullable=False, default=1),
    # NULL: a system assistant, shared read-only; else the user who created it.
    Column("owner_id", String(255), nullable=True, index=True),
    Column("created_at", Ts, nullable=False),
    Column("updated_at", Ts, nullable=False),
)

assistant_versions = Table(
    "assistant_versions",
    metadata,
    Column(
        "assistant_id",
        String(64),
        ForeignKey("assistants.assistant_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("version", Integer, primary_key=True),
    Column("graph_id", String(255), nullable=False),
    Column("name", String(255), nullable=False, default=""),
    Column("description", Text, nullable=True),
    Column("config", Json, nullable=False),
    Column("context", Json, nullable=False),
    Column("metadata", Json, nullable=False),
    Column("created_at", Ts, nullable=False),
)

threads = Table(
    "threads",
    metadata,
    Column("thread_id", String(64), primary_key=True),
    Column("status", String(16), nullable=False, default="idle", index=True),
    Column("metadata", Json, nullable=False),
    Column("config", Json, nullable=False),
    # Cached copy of the latest checkpoint's values / interrupts, for GET and search.
    Column("values", Json, nullable=True),
    Column("interrupts", Json, nullable=False),
    Column("error", Json, nullable=True),
    Column("ttl", Json, nullable=True),
    Column("expires_at", Ts, nullable=True, index=True),
    Column("created_at", Ts, nullable=False, index=True),
    Column("updated_at", Ts, nullable=False),
    Column("state_updated_at", Ts, nullable=False),
    Column("owner_id", String(255), nullable=True, index=True),
    # Scale-out: a state update holds the thread until then (database time); runs of the
    # thread are not claimed meanwhile (runtime/services/thread_state.py).
    Column("turn_until", Ts, nullable=True),
    # A user's threads newest first, read in index order, and counted by status (0013).
    Index("ix_threads_owner_created", "owner_id", "created_at"),
    Index("ix_threads_owner_updated", "owner_id", "updated_at"),
    Index("ix_threads_owner_status", "owner_id", "status"),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column(
        "thread_id",
        String(64),
        ForeignKey("threads.thread_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("assistant_id", String(64), nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("multitask_strategy", String(16), nullable=False),
    Column("kwargs", Json, nullable=False),
    Column("metadata", Json, nullable=False),
    Column("error", Json, nullable=True),
    Column("cancel_reason", String(32), nullable=True),
    Column("attempt", Integer, nullable=False, default=1),
    Column("temporary", Boolean, nullable=False, default=False),
    Column("owner", String(64), nullable=True),  # the process (run manager) running it
    Column("owner_id", String(255), nullable=True, index=True),  # the user it belongs to
    Column("principal", Json, nullable=True),  # who it executes as (runtime/access.py)
    Column("input_tokens", Integer, nullable=False, default=0),
    Column("output_tokens", Integer, nullable=False, default=0),
    Column("total_tokens", Integer, nullable=False, default=0),
    Column("llm_calls", Integer, nullable=False, default=0),
    Column("created_at", Ts, nullable=False),
    Column("updated_at", Ts, nullable=False),
    Column("started_at", Ts, nullable=True),
    Column("ended_at", Ts, nullable=True),
    # Work distribution (runtime/cluster/run_queue_cluster.py): when a pending run may be claimed
    # (its
    # after_seconds), the claim's fencing token (incremented on every claim) and until when
    # the claiming replica's lease holds (renewed by its heartbeat).
    Column("claimable_at", Ts, nullable=True),
    Column("fence", Integer, nullable=False, default=0, server_default="0"),
    Column("lease_expires_at", Ts, nullable=True),
    Index("ix_runs_thread_created", "thread_id", "created_at"),
    Index("ix_runs_status_created", "status", "created_at"),
)

run_events = Table(
    "run_events",
    metadata,
    Column(
        "run_id",
        String(64),
        ForeignKey("runs.run_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("seq", Integer, primary_key=True),
    Column("event", String(255), nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("created_at", Ts, nullable=False),
)

crons = Table(
    "crons",
    metadata,
    Column("cron_id", String(64), primary_key=True),
    Column("assistant_id", String(64), nullable=False, index=True),
    Column(
        "thread_id",
        String(64),
        ForeignKey("threads.thread_id", ondelete="CASCADE"),
        nullable=True,
    ),
    Column("schedule", String(255), nullable=False),
    Column("timezone", String(64), nullable=True),
    Column("end_time", Ts, nullable=True),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("on_run_completed", String(16), nullable=True),
    Column("payload", Json, nullable=False),
    Column("metadata", Json, nullable=False),
    Column("user_id", String(255), nullable=True),
    Column("owner_id", String(255), nullable=True, index=True),
    Column("principal", Json, nullable=True),  # its runs execute as this principal
    Column("next_run_date", Ts, nullable=True, index=True),
    Column("created_at", Ts, nullable=False),
    Column("updated_at", Ts, nullable=False),
)

# --- identity (auth.mode: local) -------------------------------------------------------------

users = Table(
    "users",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("username", String(255), nullable=False),
    # lower(username): the unique index that makes names case-insensitive on every dialect
    Column("username_key", String(255), nullable=False, unique=True),
    Column("email", String(255), nullable=True),  # optional; a login name like the username
    Column("email_key", String(255), nullable=True),  # lower(email), unique when set
    Column("display_name", String(255), nullable=False, default=""),
    Column("role", String(16), nullable=False, default="user"),
    Column("disabled", Boolean, nullable=False, default=False),
    Column("password_hash", String(255), nullable=True),  # None: an SSO-only user
    Column("external_issuer", String(512), nullable=True),
    Column("external_subject", String(255), nullable=True),
    Column("password_changed_at", Ts, nullable=True),
    Column("created_at", Ts, nullable=False),
    Column("updated_at", Ts, nullable=False),
    UniqueConstraint("external_issuer", "external_subject", name="uq_users_external"),
    UniqueConstraint("email_key", name="uq_users_email_key"),
)

sessions = Table(
    "sessions",
    metadata,
    Column("id", String(64), primary_key=True),  # sha256 hex of the cookie's token
    Column(
        "user_id",
        String(64),
        ForeignKey("users.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("csrf_token", String(128), nullable=False),
    Column("created_at", Ts, nullable=False),
    Column("last_seen_at", Ts, nullable=False),
    Column("expires_at", Ts, nullable=False, index=True),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(64), primary_key=True),
    Column(
        "user_id",
        String(64),
        ForeignKey("users.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("name", String(255), nullable=False, default=""),
    Column("prefix", String(32), nullable=False),  # shown in lists: "phk_AbCd1234"
    Column("key_hash", String(64), nullable=False, unique=True),  # sha256 hex of the key
    Column("created_at", Ts, nullable=False),
    Column("last_used_at", Ts, nullable=True),
    Column("expires_at", Ts, nullable=True),
    Column("revoked_at", Ts, nullable=True),
)

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Ts, nullable=False, index=True),
    Column("actor", String(64), nullable=True),  # a user id; None: the system or a stranger
    Column("action", String(64), nullable=False, index=True),
    Column("target", String(255), nullable=True),
    Column("client_ip", String(64), nullable=True),
    Column("detail", Json, nullable=False),
)

# Whether a skill is enabled. `owner_id` is "" for a public skill (one switch for everyone,
# changed by admins) and the owner's identity for their custom skill. No row: enabled.
skill_states = Table(
    "skill_states",
    metadata,
    Column("owner_id", String(255), primary_key=True),
    Column("name", String(64), primary_key=True),
    Column("enabled", Boolean, nullable=False),
    Column("updated_at", Ts, nullable=False),
)

# --- governance (docs/governance.md) ---------------------------------------------------------

# One row per model call of the lead agent: the ledger budgets and the usage API read. Kept
# when a thread is deleted (no foreign key), so deleting threads does not reset a budget.
model_usage = Table(
    "model_usage",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Ts, nullable=False),
    Column("owner_id", String(255), nullable=False),
    Column("thread_id", String(64), nullable=False, index=True),
    Column("run_id", String(64), nullable=False, index=True),
    Column("model", String(255), nullable=False),
    Column("input_tokens", Integer, nullable=False, default=0),
    Column("output_tokens", Integer, nullable=False, default=0),
    Column("cost_usd", Float, nullable=False, default=0.0),
    Index("ix_model_usage_owner_at", "owner_id", "at"),
)

# Thumbs up/down with a comment, one per (run, user); goes with its run.
run_feedback = Table(
    "run_feedback",
    metadata,
    Column("feedback_id", String(64), primary_key=True),
    Column("run_id", String(64), ForeignKey("runs.run_id", ondelete="CASCADE"), nullable=False),
    Column("thread_id", String(64), nullable=False, index=True),
    Column("user_id", String(255), nullable=False),
    Column("message_id", String(255), nullable=True),
    Column("rating", Integer, nullable=False),
    Column("comment", Text, nullable=True),
    Column("created_at", Ts, nullable=False),
    Column("updated_at", Ts, nullable=False),
    UniqueConstraint("run_id", "user_id", name="uq_run_feedback_run_user"),
)

# --- IM channels (channels/) ------------------------------------------------------------------

# One platform chat (and topic) is one Pronghorn thread; /new points the key at a new one.
channel_threads = Table(
    "channel_threads",
    metadata,
    Column("channel", String(64), primary_key=True),
    Column("chat_key", String(255), primary_key=True),  # chat id, or "chat id:topic id"
    Column("thread_id", String(64), nullable=False),
    Column("owner_id", String(255), nullable=True),
    Column("model_name", String(255), nullable=True),  # chosen by /model NAME
    Column("created_at", Ts, nullable=False),
    Column("updated_at", Ts, nullable=False),
)

# Platform deliveries already handled (a redelivery runs nothing), kept for a TTL.
channel_dedupe = Table(
    "channel_dedupe",
    metadata,
    Column("channel", String(64), primary_key=True),
    Column("event_key", String(255), primary_key=True),
    Column("seen_at", Ts, nullable=False, index=True),
)

# A platform identity bound to a Pronghorn user (by a one-time code): runs execute as them.
channel_bindings = Table(
    "channel_bindings",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("channel", String(64), nullable=False),
    Column("external_id", String(255), nullable=False),
    Column("external_name", String(255), nullable=False, default=""),
    Column("owner_id", String(255), nullable=False, index=True),
    Column("principal", Json, nullable=False),
    Column("created_at", Ts, nullable=False),
    UniqueConstraint("channel", "external_id", name="uq_channel_bindings_identity"),
)

# One-time connect codes (sha256 of the code), for a user, until they expire or are used.
channel_codes = Table(
    "channel_codes",
    metadata,
    Column("code_hash", String(64), primary_key=True),
    Column("channel", String(64), nullable=False),
    Column("owner_id", String(255), nullable=False),
    Column("principal", Json, nullable=False),
    Column("expires_at", Ts, nullable=False, index=True),
)

# Who runs a channel's receiver (long polling, a socket) among replicas, until `expires_at`.
channel_leases = Table(
    "channel_leases",
    metadata,
    Column("channel", String(64), primary_key=True),
    Column("holder", String(64), nullable=False),
    Column("expires_at", Ts, nullable=False),
)

# A client's Idempotency-Key on a creating request (runs, threads, assistants), per user:
# `pending` while the first request creates, then `done` with what a retry gets back.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("owner_id", String(255), primary_key=True),
    Column("key", String(255), primary_key=True),
    Column("fingerprint", String(64), nullable=False),
    Column("state", String(16), nullable=False),
    Column("result", Json, nullable=True),
    Column("updated_at", Ts, nullable=False),
    Column("expires_at", Ts, nullable=False, index=True),
)

# The files each run created, changed or deleted in its workspace
# (runtime/engine/workspace_changes.py)
workspace_changes = Table(
    "workspace_changes",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column(
        "thread_id",
        String(64),
        ForeignKey("threads.thread_id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("changes", Json, nullable=False),
    Column("created_at", Ts, nullable=False),
)
