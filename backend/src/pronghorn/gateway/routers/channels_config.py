"""`/api/channels/config`: each chat platform's `channels.<name>` section as written in
config.yaml, and `PUT /api/channels/{name}/config` to replace one. Admins only.

Shown, every secret field of the section (a `SecretStr` in config/schema/channels.py) is
`***`, or its `${VAR}` reference as written; each platform comes with its JSON schema so the
UI can draw a form for platforms it has never heard of. Taken, a `***` keeps the stored
secret; the file is validated as a reload would read it (invalid: 400 naming the field,
nothing written), written atomically with its comments kept, and reloaded, which restarts
that channel only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast, get_args

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from pronghorn.auth.principal import Principal
from pronghorn.channels.channel_manager import PLATFORMS
from pronghorn.config.schema.channels import ChannelsConfig
from pronghorn.config.secret_view import MASK, plain, shown
from pronghorn.gateway.config_file import admin, document, edit_file, editable_path
from pronghorn.gateway.deps import get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.channels import ChannelsConfigView
from pronghorn.gateway.models.errors import answers, errors
from pronghorn.runtime.wiring.app_runtime import AppRuntime

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

router = APIRouter(tags=["channels"])


class ChannelConfigBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    config: dict[str, object] = Field(
        description="The whole `channels.<name>` section; a secret `***` keeps the stored one."
    )


def _model_of(annotation: object) -> type[BaseModel] | None:
    for arg in (annotation, *get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def section_model(name: str) -> type[BaseModel] | None:
    field = ChannelsConfig.model_fields.get(name)
    return _model_of(field.annotation) if field is not None else None


def secret_fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Dotted paths of every `SecretStr` field, nested sections included."""
    out: list[str] = []
    for key, f in model.model_fields.items():
        if f.annotation is SecretStr or SecretStr in get_args(f.annotation):
            out.append(prefix + key)
        elif (sub := _model_of(f.annotation)) is not None:
            out.extend(secret_fields(sub, f"{prefix}{key}."))
    return out


def _child(value: object, key: str) -> object:
    return cast("dict[str, object]", value).get(key) if isinstance(value, dict) else None


def _walk(section: dict[str, object], path: str) -> tuple[dict[str, object], str] | None:
    """The mapping holding the last key of `path`, and that key (None if absent)."""
    *parents, last = path.split(".")
    here: object = section
    for key in parents:
        here = _child(here, key)
    if not isinstance(here, dict) or last not in here:
        return None
    return cast("dict[str, object]", here), last


def _channels(doc: CommentedMap) -> dict[str, object]:
    found: object = doc.get("channels")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    # plain() copies a mapping as a dict
    return cast("dict[str, object]", plain(found)) if isinstance(found, dict) else {}


def _masked(section: Mapping[str, object], secrets: list[str]) -> dict[str, object]:
    out = cast("dict[str, object]", plain(section))  # plain() copies a mapping as a dict
    for path in secrets:
        found = _walk(out, path)
        if found is not None:
            found[0][found[1]] = shown(found[0][found[1]])
    return out


def _view(runtime: AppRuntime, doc: CommentedMap) -> dict[str, object]:
    editable = editable_path(runtime)
    writable = editable is not None
    stored = _channels(doc)
    out: list[dict[str, object]] = []
    for name in PLATFORMS:
        model = section_model(name)
        if model is None:
            continue
        secrets = secret_fields(model)
        raw: object = stored.get(name)
        section: dict[str, object] | None
        if writable:
            section = cast("dict[str, object]", raw) if isinstance(raw, dict) else None
        else:  # no file: the live config
            live: BaseModel | None = getattr(runtime.config.channels, name, None)
            section = live.model_dump(mode="json", exclude_defaults=True) if live else None
        out.append(
            {
                "name": name,
                "configured": section is not None,
                "config": _masked(section, secrets) if section is not None else {},
                "secrets": secrets,
                "schema": model.model_json_schema(),
            }
        )
    return {
        "channels": out,
        "source_path": str(editable) if editable is not None else None,
        "writable": writable,
    }


@router.get(
    "/api/channels/config",
    response_model=None,
    responses={**answers(ChannelsConfigView), **errors(401, 403)},
)
async def get_channels_config(
    runtime: AppRuntime = Depends(get_runtime), _admin: Principal = Depends(admin)
) -> dict[str, object]:
    """Every platform's section as configured (secrets masked), with its JSON schema."""
    return _view(runtime, await document(runtime))


@router.put(
    "/api/channels/{name}/config",
    response_model=None,
    responses={**answers(ChannelsConfigView), **errors(400, 401, 403, 404, 409, 422)},
)
async def put_channel_config(
    name: str,
    body: ChannelConfigBody,
    runtime: AppRuntime = Depends(get_runtime),
    _admin: Principal = Depends(admin),
) -> dict[str, object]:
    """Replace `channels.<name>` (validated; written to config.yaml; that channel restarts)."""
    model = section_model(name) if name in PLATFORMS else None
    if model is None:
        raise ApiError(404, f"No chat platform {name!r}")
    raw = cast("dict[str, object]", plain(body.config))  # plain() copies a dict as a dict
    old: object = _channels(await document(runtime)).get(name)
    stored = cast("dict[str, object]", old) if isinstance(old, dict) else {}
    for path in secret_fields(model):
        found = _walk(raw, path)
        if found is None or found[0][found[1]] != MASK:
            continue
        before = _walk(stored, path)
        if before is None:
            raise ApiError(400, f"channels.{name}.{path}: '***' but no stored value to keep")
        found[0][found[1]] = before[0][before[1]]

    def edit(doc: CommentedMap) -> None:
        from ruamel.yaml.comments import (
            CommentedMap,
        )  # ruamel: loaded by the first config edit, not at every start

        channels: object = doc.get("channels")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not isinstance(channels, CommentedMap):
            channels = CommentedMap()
            doc["channels"] = channels
        channels[name] = raw

    await edit_file(runtime, edit)
    return _view(runtime, await document(runtime))
