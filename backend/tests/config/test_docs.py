"""docs/configuration.md and config.example.yaml cover every field of AppConfig.

When this fails after a schema change: run
``uv run python -m pronghorn.config.docgen --write`` and add the key, with a comment and its
default value, to config.example.yaml.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from pronghorn.config import docgen
from pronghorn.config.loader import load_config
from pronghorn.config.schema.app import AppConfig

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "configuration.md"
EXAMPLE = REPO / "config.example.yaml"
EXAMPLE_ENV = {"OPENAI_API_KEY": "sk-example", "ANTHROPIC_API_KEY": "sk-ant-example"}


def _model(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is list and args:
        inner, is_list = args[0], True
    else:
        inner, is_list = (args[0] if len(args) == 1 else annotation), False
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return inner, is_list
    return None, False


def field_paths(model: type[BaseModel] = AppConfig, prefix: str = "") -> list[str]:
    """Every settable key: leaves, plus lists of sections and their item keys."""
    out: list[str] = []
    for name, field in model.model_fields.items():
        path = prefix + name
        sub, is_list = _model(field.annotation)
        if sub is None:
            out.append(path)
        elif is_list:
            out.append(path)
            out += field_paths(sub, f"{path}[].")
        else:
            out += field_paths(sub, f"{path}.")
    return out


def test_walk_sees_nested_fields() -> None:
    paths = field_paths()
    assert {"data_dir", "server.port", "store.ttl.refresh_on_read", "models"} <= set(paths)
    assert "models[].api_key" in paths


def test_docs_mention_every_field() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [p for p in field_paths() if f"`{p}`" not in text]
    assert not missing, f"docs/configuration.md lacks {missing}: run docgen --write"


def test_docs_reference_is_fresh() -> None:
    assert docgen.missing_descriptions() == []
    assert docgen.main(["--check", "--doc", str(DOC)]) == 0


def _uncommented_examples(text: str) -> dict[str, Any]:
    """The commented-out example blocks (``# graphs:``, ``# models:``, ``# tools.extra:``) as
    YAML."""
    blocks: dict[str, Any] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = re.fullmatch(r"# ([a-z_.]+):", line)
        if not match:
            continue
        body = [line[2:]]
        for nxt in lines[i + 1 :]:
            if not nxt.startswith("#"):
                break
            body.append(nxt[2:] if nxt.startswith("# ") else nxt[1:])
        blocks.update(yaml.safe_load("\n".join(body)))
    return blocks


def _has_path(data: Any, path: str) -> bool:
    head, _, rest = path.partition(".")
    if not isinstance(data, dict) or head not in data:
        return False
    return _has_path(data[head], rest) if rest else True


def _commented_section(text: str, path: str) -> Any:
    """An optional section that is null in the example (``  oidc: null``) is shown in the
    commented block right below it (``  # oidc:`` then ``  #   key: ...`` lines), as YAML."""
    parts = path.split(".")
    indent = "  " * (len(parts) - 1)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line != f"{indent}# {parts[-1]}:":
            continue
        body = [line[len(indent) + 2 :]]
        for nxt in lines[i + 1 :]:
            if not nxt.startswith(f"{indent}#   "):
                break
            body.append(nxt[len(indent) + 2 :])
        return yaml.safe_load("\n".join(body))[parts[-1]]
    return None


def _in_example(active: Any, text: str, path: str) -> bool:
    if _has_path(active, path):
        return True
    parts = path.split(".")
    for n in range(1, len(parts)):
        section = ".".join(parts[:n])
        if _has_path(active, section) and _get(active, section) is None:
            block = _commented_section(text, section)
            return _has_path(block, ".".join(parts[n:]))
    return False


def _get(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[part]
    return data


@pytest.fixture
def no_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    empty = tmp_path / "empty.env"
    empty.write_text("", encoding="utf-8")
    return empty


def test_example_loads_and_equals_the_defaults(no_dotenv: Path) -> None:
    loaded = load_config(EXAMPLE, EXAMPLE_ENV, no_dotenv)
    assert loaded.config == AppConfig()


def test_example_has_every_key_with_a_comment() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    active = yaml.safe_load(text)
    examples = _uncommented_examples(text)
    missing = []
    for path in field_paths():
        if "[]." in path:
            section, _, key = path.partition("[].")
            if not any(_has_path(item, key) for item in examples.get(section, [])):
                missing.append(path)
        elif not _in_example(active, text, path):
            missing.append(path)
    assert not missing, f"config.example.yaml lacks {missing}"

    uncommented = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s*[a-z_]+:", line) and "#" not in line:
            previous = lines[i - 1].strip() if i else ""
            if not previous.startswith("#"):
                uncommented.append(line.strip())
    assert not uncommented, f"keys without a comment: {uncommented}"


def test_commented_examples_are_valid(no_dotenv: Path, tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    examples = _uncommented_examples(text)
    assert examples["graphs"] and len(examples["models"]) >= 3
    assert {m["provider"] for m in examples["models"]} >= {"openai", "anthropic", "scripted"}
    nested: dict[str, Any] = {}
    for key, value in examples.items():  # `tools.extra` -> {"tools": {"extra": ...}}
        head, _, rest = key.partition(".")
        if rest:
            nested.setdefault(head, {})[rest] = value
        else:
            nested[key] = value
    candidate = tmp_path / "candidate.yaml"
    candidate.write_text(yaml.safe_dump(nested), encoding="utf-8")
    # file-based graph specs must name a file that exists (relative to the config file)
    local_graph = tmp_path / "graphs" / "local.py"
    local_graph.parent.mkdir()
    local_graph.write_text("def make_graph(config): ...\n", encoding="utf-8")
    config = load_config(candidate, EXAMPLE_ENV, no_dotenv).config
    api_key = config.models[0].api_key
    assert api_key is not None and api_key.get_secret_value() == "sk-example"


def test_commented_oidc_example_is_valid(no_dotenv: Path, tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    oidc = _commented_section(text, "auth.oidc")
    candidate = tmp_path / "oidc.yaml"
    candidate.write_text(yaml.safe_dump({"auth": {"mode": "local", "oidc": oidc}}), "utf-8")
    config = load_config(candidate, {"OIDC_CLIENT_SECRET": "s3cret"}, no_dotenv).config
    assert config.auth.oidc is not None
    assert config.auth.oidc.client_secret.get_secret_value() == "s3cret"
    assert config.auth.oidc.allowed_domains == ["example.com"]
