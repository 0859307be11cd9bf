"""Names `make deadcode` (vulture over src/) must not report: each is used, but not in a way
vulture can see. Only true false positives belong here; remove an entry when its name goes.
Framework hooks matched by decorator or name pattern are in [tool.vulture] in pyproject.toml.
This file is read by vulture only, never imported."""

from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# Overrides that a base class or library calls.
_.is_authenticated  # langgraph_sdk BaseUser (auth/custom/user.py, runtime/access.py)
_._load_env_vars  # pydantic-settings EnvSettingsSource (config/envsource.py)
_.preserve_quotes  # ruamel.yaml option (config/file_edit.py)
_.daemon_threads  # socketserver (gateway/metrics_listener.py)
_.log_message  # http.server BaseHTTPRequestHandler
_.BoundedHttpToolsProtocol  # uvicorn imports it by path (cli.py: `http=`)
_.async_auth_flow  # httpx.Auth (mcp/oauth.py)
_.aget_delta_channel_history  # LangGraph checkpoint saver (runtime/checkpoints/sqlite_checkpoint.py)
_.aput_writes  # LangGraph checkpoint saver (runtime/checkpoints/outage_saver.py, sqlite_checkpoint.py)
_.abatch
_.bound_tools  # LangChain chat model (models/scripted.py)
_._llm_type
_._identifying_params
_.bind_tools
_._generate
_._agenerate
_._astream
_.handle_starttag  # html.parser HTMLParser (web/html_text.py)
_.handle_endtag
_.handle_data

# Parameters a caller's signature requires (signal handler, click options, callbacks,
# descriptor __get__, DB-API event hooks).
_.signum
_.password_stdin
_.proxy
_.tags
_.prompts
_.input_str
_.inputs
_.objtype
_.transaction

# Entry points named by string or used from outside the package.
_.app_from_env  # uvicorn factory "pronghorn.gateway.app:app_from_env" (cli.py)
_.as_user  # the embedded client's public API (client.py, docs/memory.md)
_.get_thread
_.update_fact
_.clear_memory
_.export_memory
_.import_memory
_.flush_memory

# Fields of typed state, records and config sections, read by LangGraph, serialization,
# YAML or the API rather than by attribute access.
_.uploaded_files  # agent/state.py ThreadState channels
_.thread_data
_.viewed_images
_.mcp_promoted  # mcp/middleware.py state channel
_.work_context  # memory/records.py summary keys
_.personal_context
_.current_focus
_.recent_months
_.earlier_context
_.long_term_background
_.telegram  # config/schema/channels.py sections
_.slack
_.discord
_.dingtalk
_.wecom
_.next_offset  # gateway/routers/thread_search.py response field
_.email_verified  # auth/oidc/claims.py
_.password_changed_at  # persistence/repos/users.py record of a row
_.last_seen  # runtime/cluster/replicas.py replica card
_.limits_hit  # sandbox/base.py command result
_.graph_reloader  # runtime/wiring/app_runtime.py component slot
_.input_mode  # agent/human_input.py HumanInputRequest: DeerFlow's shape, read by its clients
# sandbox/workspace_scan.py FileChange, ChangeSummary: DeerFlow's workspace-changes JSON
_.size_before
_.size_after
_.sha256_before
_.sha256_after
_.diff_truncated
_.diff_unavailable_reason
_.symlink_target_before
_.symlink_target_after
_.symlink_created
_.additions
_.deletions
_.diff
_.symlink

# Read by the tests: counters, test hooks and helpers.
_.fetches
_.connects
_.builds
_.commits
_.isolation_in_effect
_.PHASES
_.wait_discovered
_.drop_keys
_.build_argv

# Keys of a TypedDict read by subscription (persistence/repos/run_units.py AcceptArgs).
_.create_thread
_.reject_if_busy
