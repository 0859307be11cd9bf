"""`/api/mcp/*`: the MCP servers' config (read and written in config.yaml), their status
and a connection test. Admins only (with `auth.mode: none` the local user is one).

`GET /api/mcp/config` shows `mcp.servers` as written in the file: `${VAR}` references as
they are, literal secrets as `***` (mcp/masking.py). `PUT` replaces the servers (a `***`
keeps the stored secret), validates the whole file as a reload would, writes it atomically
keeping comments elsewhere (config/file_edit.py) and applies it at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.auth.principal import Principal
from pronghorn.config.errors import ConfigError
from pronghorn.config.file_edit import NoConfigFile, validate_edit
from pronghorn.config.schema.mcp import McpServerConfig
from pronghorn.gateway.config_file import admin, document, edit_file, editable_path
from pronghorn.gateway.deps import get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import answers, errors
from pronghorn.gateway.models.mcp import McpConfigView, McpProbe, McpStatus
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.mcp.errors import McpConfigError
from pronghorn.mcp.masking import check_api_stdio, mask_server, unmask_server
from pronghorn.runtime.wiring.app_runtime import AppRuntime

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

router = APIRouter(tags=["mcp"], route_class=StrictJSONRoute)

_OPTIONS = ("tool_name_prefix", "tool_search_threshold", "max_stdio_sessions")


class McpConfigBody(BaseModel):
    """The `mcp:` section to store (DeerFlow's `mcp_servers` shape, plus our options)."""

    model_config = ConfigDict(extra="forbid")

    mcp_servers: dict[str, dict[str, object]] = Field(
        description="Servers by name; a value `***` keeps the stored secret."
    )
    tool_name_prefix: bool | None = Field(default=None)
    tool_search_threshold: int | None = Field(default=None)
    max_stdio_sessions: int | None = Field(default=None)


class McpEnabledBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server_name: str = Field(description="The server to switch.")
    enabled: bool = Field(description="Whether its tools are offered.")


class McpTestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The server's name (its stored secrets fill in `***`).")
    server: dict[str, object] | None = Field(
        default=None, description="The settings to try; omitted: the stored ones."
    )


def _section(doc: CommentedMap) -> dict[str, object]:
    mcp: object = doc.get("mcp")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return cast("dict[str, object]", mcp) if isinstance(mcp, dict) else {}  # a YAML mapping


def _stored_servers(doc: CommentedMap) -> dict[str, dict[str, object]]:
    servers: object = _section(doc).get("servers")
    # config.yaml's `mcp.servers`: server names to their settings (mappings, as the config
    # schema requires of the file every edit validates)
    return cast("dict[str, dict[str, object]]", servers) if isinstance(servers, dict) else {}


def _view(runtime: AppRuntime, doc: CommentedMap) -> dict[str, object]:
    live = runtime.config.mcp
    editable = editable_path(runtime)
    if editable is not None:
        servers = {str(k): mask_server(v) for k, v in _stored_servers(doc).items()}
    else:  # no file: the live (default) config, secrets masked
        servers = {
            name: mask_server(s.model_dump(mode="json", exclude_defaults=True))
            for name, s in live.servers.items()
        }
    return {
        "mcp_servers": servers,
        "tool_name_prefix": live.tool_name_prefix,
        "tool_search_threshold": live.tool_search_threshold,
        "max_stdio_sessions": live.max_stdio_sessions,
        "source_path": str(editable) if editable is not None else None,
        "writable": editable is not None,
    }


def _set_mcp(
    doc: CommentedMap, servers: Mapping[str, object], options: Mapping[str, object]
) -> None:
    from ruamel.yaml.comments import (
        CommentedMap,
    )  # ruamel: loaded by the first config edit, not at every start

    mcp: object = doc.get("mcp")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(mcp, CommentedMap):
        mcp = CommentedMap()
        doc["mcp"] = mcp
    mcp["servers"] = servers
    for key, value in options.items():
        mcp[key] = value


async def _edit(
    runtime: AppRuntime, servers: Mapping[str, object], options: Mapping[str, object]
) -> None:
    await edit_file(runtime, lambda doc: _set_mcp(doc, servers, options))


@router.get(
    "/api/mcp/config",
    response_model=None,
    responses={**answers(McpConfigView), **errors(403)},
)
async def get_mcp_config(
    runtime: AppRuntime = Depends(get_runtime), _admin: Principal = Depends(admin)
) -> dict[str, object]:
    """The MCP servers as configured (secrets masked)."""
    return _view(runtime, await document(runtime))


@router.put(
    "/api/mcp/config",
    response_model=None,
    responses={**answers(McpConfigView), **errors(400, 403, 409, 422)},
)
async def put_mcp_config(
    body: McpConfigBody,
    runtime: AppRuntime = Depends(get_runtime),
    _admin: Principal = Depends(admin),
) -> dict[str, object]:
    """Replace the MCP servers (validated; written to config.yaml; applied at once)."""
    stored = _stored_servers(await document(runtime))
    try:
        servers = {
            name: unmask_server(name, raw, stored.get(name))
            for name, raw in body.mcp_servers.items()
        }
        allowed = runtime.config.mcp.api_stdio_commands
        for name, raw in servers.items():
            check_api_stdio(name, raw, stored.get(name), allowed)
    except McpConfigError as exc:
        raise ApiError(400, str(exc)) from None
    options = {k: getattr(body, k) for k in _OPTIONS if getattr(body, k) is not None}
    await _edit(runtime, servers, options)
    return _view(runtime, await document(runtime))


@router.patch(
    "/api/mcp/config",
    response_model=None,
    responses={**answers(McpConfigView), **errors(400, 403, 404, 409, 422)},
)
async def patch_mcp_config(
    body: McpEnabledBody,
    runtime: AppRuntime = Depends(get_runtime),
    _admin: Principal = Depends(admin),
) -> dict[str, object]:
    """Enable or disable one server."""
    stored = _stored_servers(await document(runtime))
    if body.server_name not in stored:
        raise ApiError(404, f"MCP server {body.server_name!r} not found in the config file")
    servers = {str(k): dict(v) for k, v in stored.items()}
    servers[body.server_name]["enabled"] = body.enabled
    await _edit(runtime, servers, {})
    return _view(runtime, await document(runtime))


@router.get(
    "/api/mcp/status",
    response_model=None,
    responses={**answers(McpStatus), **errors(403)},
)
async def get_mcp_status(
    runtime: AppRuntime = Depends(get_runtime), _admin: Principal = Depends(admin)
) -> dict[str, object]:
    """Per server: status (connected, connecting, error, disabled), tools, last error."""
    return runtime.mcp.status()


@router.post(
    "/api/mcp/test",
    response_model=None,
    responses={**answers(McpProbe), **errors(400, 403, 404, 422)},
)
async def test_mcp_server(
    body: McpTestBody,
    runtime: AppRuntime = Depends(get_runtime),
    _admin: Principal = Depends(admin),
) -> dict[str, object]:
    """Connect to a server (stored, or as given) and list its tools; nothing is saved."""
    if body.server is None:
        found = runtime.config.mcp.servers.get(body.name)
        if found is None:
            raise ApiError(404, f"MCP server {body.name!r} not found")
        server = found
    else:
        stored = _stored_servers(await document(runtime))
        try:
            raw = unmask_server(body.name, body.server, stored.get(body.name))
            allowed = runtime.config.mcp.api_stdio_commands
            check_api_stdio(body.name, raw, stored.get(body.name), allowed)
        except McpConfigError as exc:
            raise ApiError(400, str(exc)) from None
        others = {str(k): v for k, v in stored.items() if k != body.name}

        def edit(doc: CommentedMap) -> None:
            _set_mcp(doc, {**others, body.name: {**raw, "enabled": True}}, {})

        try:
            config = await validate_edit(runtime.settings, edit)
        except NoConfigFile:
            try:
                server = McpServerConfig.model_validate(raw)
            except ValueError as exc:
                raise ApiError(400, str(exc)) from None
        except ConfigError as exc:
            raise ApiError(400, str(exc)) from None
        else:
            server = config.mcp.servers[body.name]
    result = await runtime.mcp.probe(body.name, server)
    return {
        "ok": result.ok,
        "tools": result.tools,
        "error": result.error,
        "elapsed_ms": result.elapsed_ms,
    }
