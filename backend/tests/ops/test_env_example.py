""".env.example lists every variable the image, its entrypoint and the compose file read."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
ENV_EXAMPLE = REPO / ".env.example"
DOCKERFILE = REPO / "docker" / "Dockerfile"
ENTRYPOINT = REPO / "docker" / "entrypoint.sh"
COMPOSE = REPO / "docker" / "docker-compose.yaml"
# Read by the doctor and referenced from config.example.yaml as ${VAR}.
PROVIDER_KEYS = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TAVILY_API_KEY"}


def listed(text: str) -> set[str]:
    """Names set or shown commented out as ``NAME=...`` at the start of a line."""
    return set(re.findall(r"^(?:#\s*)?([A-Z][A-Z0-9_]*)=", text, flags=re.MULTILINE))


def runtime_stage(text: str) -> str:
    return re.split(r"^FROM\s", text, flags=re.MULTILINE)[-1]


def required() -> dict[str, set[str]]:
    compose = "\n".join(
        line
        for line in COMPOSE.read_text(encoding="utf-8").splitlines()
        if not line.lstrip().startswith("#")
    )
    return {
        "Dockerfile runtime ENV": set(
            re.findall(r"\b(PRONGHORN_[A-Z0-9_]+)=", runtime_stage(DOCKERFILE.read_text()))
        ),
        "entrypoint.sh": set(re.findall(r"\$\{(PRONGHORN_[A-Z0-9_]+)", ENTRYPOINT.read_text())),
        # ${VAR}, ${VAR:-default}; $${VAR} is an escape evaluated inside the container.
        "compose interpolation": set(re.findall(r"(?<!\$)\$\{([A-Z][A-Z0-9_]*)", compose)),
        "provider keys": PROVIDER_KEYS,
    }


def test_every_deployment_variable_is_listed() -> None:
    names = listed(ENV_EXAMPLE.read_text(encoding="utf-8"))
    wanted = required()
    assert len(wanted["Dockerfile runtime ENV"]) >= 5 and len(wanted["compose interpolation"]) >= 5
    missing = {where: sorted(vars_ - names) for where, vars_ in wanted.items() if vars_ - names}
    assert not missing, f".env.example lacks {missing}"


def test_listed_reads_set_and_commented_lines() -> None:
    text = "# comment PRONGHORN_X=1 in prose\nA_KEY=\n# B_URL=http://x\n#C=1\n"
    assert listed(text) == {"A_KEY", "B_URL", "C"}
