"""`auth.custom` names the Auth object; anything wrong with it stops the start with a message
that says what."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pronghorn.auth.authenticator import Credentials
from pronghorn.auth.custom.authenticate import CustomAuthConfigError, CustomAuthenticator
from pronghorn.auth.custom.authorize import CustomAuthorizer
from pronghorn.config.errors import ConfigError
from pronghorn.config.loader import load_config
from pronghorn.runtime.wiring.auth_backends import auth_backends

AUTH_PY = """
from langgraph_sdk import Auth

auth = Auth()
not_auth = {"identity": "nope"}

@auth.authenticate
async def who(authorization: str | None) -> str:
    return "file-user"
"""


def write_config(tmp_path: Path, auth: dict[str, object]) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"auth": auth}), encoding="utf-8")
    return path


def test_mode_custom_without_auth_custom_is_an_invalid_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"auth\.mode custom needs auth\.custom"):
        load_config(write_config(tmp_path, {"mode": "custom"}), {})


def test_a_spec_without_an_attribute_is_an_invalid_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must look like"):
        load_config(write_config(tmp_path, {"mode": "custom", "custom": "./auth.py"}), {})


def test_a_missing_auth_file_is_an_invalid_config(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"mode": "custom", "custom": "./nothere.py:auth"})
    with pytest.raises(ConfigError, match=r"auth.custom: file .*nothere\.py does not exist"):
        load_config(path, {})


async def test_a_file_spec_loads_relative_to_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "auth.py").write_text(AUTH_PY, encoding="utf-8")
    path = write_config(tmp_path / "conf", {"mode": "custom", "custom": "./auth.py:auth"})
    config = load_config(path, {}).config
    authenticator, authorizer = await auth_backends(config, path.parent)
    assert isinstance(authenticator, CustomAuthenticator)
    assert isinstance(authorizer, CustomAuthorizer)
    principal = await authenticator.authenticate(Credentials("GET", "/api/x", {}))
    assert principal.identity == "file-user"


async def test_a_module_spec_loads_from_the_import_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "mycorp_auth_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "policy.py").write_text(AUTH_PY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write_config(tmp_path, {"mode": "custom", "custom": "mycorp_auth_pkg.policy:auth"})
    authenticator, _ = await auth_backends(load_config(path, {}).config, tmp_path)
    principal = await authenticator.authenticate(Credentials("GET", "/api/x", {}))
    assert principal.identity == "file-user"


@pytest.mark.parametrize(
    ("source", "spec", "message"),
    [
        (AUTH_PY, "./auth.py:missing", "no attribute 'missing'"),
        (AUTH_PY, "./auth.py:not_auth", "is a dict, not a langgraph_sdk.Auth"),
        ("import not_a_module_anywhere\n", "./auth.py:auth", "not_a_module_anywhere"),
        (
            # the SDK refuses a sync @auth.on handler when the file is imported
            "from langgraph_sdk import Auth\nauth = Auth()\n"
            "@auth.on\ndef sync(ctx, value):\n    return None\n",
            "./auth.py:auth",
            "must be an async function",
        ),
    ],
)
async def test_a_bad_object_stops_the_start_with_what_is_wrong(
    tmp_path: Path, source: str, spec: str, message: str
) -> None:
    (tmp_path / "auth.py").write_text(source, encoding="utf-8")
    config = load_config(write_config(tmp_path, {"mode": "custom", "custom": spec}), {}).config
    with pytest.raises(CustomAuthConfigError, match=message) as caught:
        await auth_backends(config, tmp_path)
    assert spec in str(caught.value)
