"""Generate the field reference of docs/configuration.md from ``AppConfig``.

    uv run python -m pronghorn.config.docgen            # print the reference
    uv run python -m pronghorn.config.docgen --write    # update docs/configuration.md
    uv run python -m pronghorn.config.docgen --check    # exit 1 if the doc is stale

Only the part between the two marker comments is generated; the prose around it is
written by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from pronghorn.config.restart import is_startup_only
from pronghorn.config.schema.app import AppConfig

BEGIN = "<!-- BEGIN GENERATED FIELD REFERENCE (python -m pronghorn.config.docgen --write) -->"
END = "<!-- END GENERATED FIELD REFERENCE -->"
_PLAIN_NAMES: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
DEFAULT_DOC = Path(__file__).resolve().parents[4] / "docs" / "configuration.md"

# Descriptions for fields and sections whose schema entry has none. Prefer adding a
# ``description=`` in schema/app.py; this table only fills the gaps.
FALLBACK: dict[str, str] = {
    "store": "The LangGraph store (`/store` API and agent memory).",
    "store.ttl": "Time-to-live of store items.",
    "logging": "Process logging (startup-only).",
    "models": "Chat models the agent may use; see the commented example in config.example.yaml.",
    "models[].max_tokens": "Max tokens of one model response; provider default when null.",
    "models[].temperature": "Sampling temperature; provider default when null.",
    "models[].supports_vision": "The model accepts images (enables `view_image`).",
    "models[].supports_thinking": "The model can return reasoning/thinking content.",
    "agent": "Lead agent behaviour.",
    "agent.title_max_chars": "Max length of the thread title generated after the first turn.",
    "agent.summarization_trigger_tokens": (
        "Older messages are summarized once the conversation exceeds this many tokens."
    ),
    "agent.loop_warn_repeats": "Identical tool calls in a row before the agent is warned.",
    "agent.loop_stop_repeats": "Identical tool calls in a row before the run is stopped.",
    "agent.tool_output_soft_chars": "Tool output above this is shortened for the model.",
    "agent.tool_output_hard_chars": "Tool output is never longer than this for the model.",
    "sandbox": "Where the agent's commands and file tools run.",
    "sandbox.command_timeout_s": "Timeout of one sandboxed command.",
    "sandbox.max_output_chars": "Output of one command is cut to this many characters.",
    "uploads": "File uploads into a thread.",
    "uploads.max_file_bytes": "Largest single uploaded file.",
    "uploads.max_total_bytes": "Largest total of the uploads of one thread.",
    "uploads.convert": (
        "Markdown copies of uploaded documents (PDF, DOCX, XLSX, PPTX, HTML, EPUB), made with "
        "markitdown in a separate process at upload time and saved beside the original as "
        "`NAME.md` (e.g. `report.docx.md`); the agent is told about the copy."
    ),
    "uploads.convert.enabled": "Convert uploaded documents to Markdown.",
    "uploads.convert.extensions": "File extensions (lower case, no dot) that are converted.",
    "uploads.convert.timeout_s": (
        "Wall-clock (and CPU) time one conversion may take; past it the converter is killed "
        "and the file gets an error, the upload itself still succeeds."
    ),
    "uploads.convert.memory_bytes": "Address space (RLIMIT_AS) of the converter process.",
    "uploads.convert.max_output_bytes": (
        "Largest Markdown copy kept; a longer one is cut there and ends with a note."
    ),
    "uploads.convert.isolation": (
        "How the converter is kept off the network: `bwrap` (bubblewrap, no network, only "
        "system folders and the Python install visible; a conversion fails when it cannot "
        "start), `none` (a plain child process with an empty environment: it could reach the "
        "network), `auto` (bubblewrap when it works on this host, else `none` with a warning "
        "in the log)."
    ),
    "web": "The `web_search` and `web_fetch` tools.",
    "web.fetch_timeout_s": "Timeout of one `web_fetch` request.",
    "web.fetch_max_bytes": "Largest response body `web_fetch` reads.",
    "web.search_provider": "Backend of `web_search`; null disables the tool.",
    "web.search_api_key": "API key of the search provider (tavily); use ${VAR}.",
    "web.search_base_url": "Base URL of the search provider (searxng, or a tavily proxy).",
}


@dataclass(frozen=True)
class Row:
    path: str
    type: str
    default: str
    description: str
    restart: bool


@dataclass(frozen=True)
class Section:
    path: str
    description: str
    rows: list[Row]


# Field annotations are runtime typing objects (classes, unions, generic aliases, Literal):
# no static type describes them all, so they are `object` in these helpers.
def _strip_none(annotation: object) -> tuple[object, bool]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) < len(typing.get_args(annotation)):
            inner = args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
            return inner, True
    return annotation, False


def model_of(annotation: object) -> type[BaseModel] | None:
    """The section model of a field: ``X``, ``X | None`` or ``list[X]`` of a BaseModel."""
    inner, _ = _strip_none(annotation)
    if typing.get_origin(inner) is list:
        inner = typing.get_args(inner)[0]
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return inner
    return None


def mapped_model_of(annotation: object) -> type[BaseModel] | None:
    """The section model of a ``dict[str, X]`` field (e.g. ``mcp.servers``), else None."""
    inner, _ = _strip_none(annotation)
    if typing.get_origin(inner) is dict:
        value = typing.get_args(inner)[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value
    return None


def type_name(annotation: object) -> str:
    inner, nullable = _strip_none(annotation)
    origin = typing.get_origin(inner)
    if origin is Literal:
        name = " \\| ".join(json.dumps(v) for v in typing.get_args(inner))
    elif origin is list:
        name = f"list of {type_name(typing.get_args(inner)[0])}"
    elif origin is dict:
        _, value = typing.get_args(inner)
        name = "mapping" if value is Any else f"mapping of string to {type_name(value)}"
    elif inner is Any:
        name = "any"
    elif inner is SecretStr:
        name = "secret string"
    elif isinstance(inner, type) and issubclass(inner, BaseModel):
        name = "section"
    else:
        plain = cast(object, inner)  # a class, or a typing form without an origin
        name = _PLAIN_NAMES.get(plain, getattr(plain, "__name__", str(plain)))
    return f"{name} or null" if nullable else name


def _bounds(field: FieldInfo) -> str:
    parts: list[str] = []
    for item in field.metadata:
        for cls, sign, attr in (
            (Ge, ">=", "ge"),
            (Gt, ">", "gt"),
            (Le, "<=", "le"),
            (Lt, "<", "lt"),
        ):
            if isinstance(item, cls):
                parts.append(f"{sign} {getattr(item, attr)}")
    return f" ({', '.join(parts)})" if parts else ""


def _size(value: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale and value % scale == 0:
            return f" ({value // scale} {unit})"
    return ""


def default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "-"
    text = f"`{json.dumps(value, default=str)}`"
    if isinstance(value, int) and not isinstance(value, bool):
        text += _size(value)
    return text


def describe(path: str, field: FieldInfo | None, model: type[BaseModel] | None) -> str:
    if field is not None and field.description:
        return field.description
    if path in FALLBACK:
        return FALLBACK[path]
    if model is not None and model.__doc__ and not model.__doc__.startswith("!"):
        return " ".join(model.__doc__.split())
    return ""


def sections(model: type[BaseModel] = AppConfig, prefix: str = "") -> list[Section]:
    """The reference, one section per nested model (``models[]`` for list items)."""
    rows: list[Row] = []
    nested: list[Section] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        sub = model_of(field.annotation)
        is_list = typing.get_origin(_strip_none(field.annotation)[0]) is list
        if sub is not None and not is_list:
            title = describe(path, field, sub)
            nested += [Section(path, title, []), *sections(sub, f"{path}.")]
            continue
        rows.append(
            Row(
                path=path,
                type=(
                    f"list of `{path}[]` entries"
                    if sub is not None
                    else type_name(field.annotation) + _bounds(field)
                ),
                default=default_text(field),
                description=describe(path, field, sub),
                restart=is_startup_only(path),
            )
        )
        if sub is not None:
            nested += [Section(f"{path}[]", f"One entry of `{path}`.", [])]
            nested += sections(sub, f"{path}[].")
        if (mapped := mapped_model_of(field.annotation)) is not None:
            entry = f"{path}.<name>"
            about = " ".join((mapped.__doc__ or "").split()) or f"One `{path}` entry."
            nested += [Section(entry, about, [])]
            nested += sections(mapped, f"{entry}.")
    head = Section(prefix.rstrip("."), "", rows) if rows else None
    out = [head] if head else []
    # merge the header-only Section entries with their rows
    merged: list[Section] = []
    for sec in out + nested:
        if merged and merged[-1].path == sec.path:
            prev = merged.pop()
            sec = Section(sec.path, prev.description or sec.description, prev.rows + sec.rows)
        merged.append(sec)
    return merged


def missing_descriptions() -> list[str]:
    return [r.path for s in sections() for r in s.rows if not r.description]


def render() -> str:
    lines = [BEGIN, ""]
    for sec in sections():
        if not sec.rows:
            continue
        title = sec.path or "top level"
        lines.append(f"### `{title}`" if sec.path else f"### {title}")
        lines.append("")
        if sec.description:
            lines += [sec.description, ""]
        lines.append("| Key | Type | Default | Restart | Description |")
        lines.append("| --- | --- | --- | --- | --- |")
        for r in sec.rows:
            restart = "restart" if r.restart else "live"
            desc = r.description.replace("|", "\\|")
            lines.append(f"| `{r.path}` | {r.type} | {r.default} | {restart} | {desc} |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines) + "\n"


def splice(document: str, reference: str) -> str:
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        raise ValueError("the generated-reference markers are missing")
    return document[:start] + reference + document[end + len(END) + 1 :]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pronghorn.config.docgen")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="update the document in place")
    mode.add_argument("--check", action="store_true", help="exit 1 if the document is stale")
    parser.add_argument("--doc", type=Path, default=DEFAULT_DOC, help="docs/configuration.md")
    args = parser.parse_args(argv)

    missing = missing_descriptions()
    if missing:
        print(f"fields without a description: {', '.join(missing)}", file=sys.stderr)
        return 1
    reference = render()
    if not (args.write or args.check):
        sys.stdout.write(reference)
        return 0
    document = args.doc.read_text(encoding="utf-8")
    updated = splice(document, reference)
    if args.check:
        if updated != document:
            print(f"{args.doc} is stale: run {parser.prog} --write", file=sys.stderr)
            return 1
        return 0
    args.doc.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
