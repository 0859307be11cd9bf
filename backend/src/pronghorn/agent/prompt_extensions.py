"""Prompt sections of the extension surface: a custom agent's persona, the enabled skills."""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

from pronghorn.agent.options import AgentOptions
from pronghorn.skills.model import RunSkill


def persona_section(options: AgentOptions) -> str:
    """The custom agent's name and persona (its ``system_prompt``), or nothing."""
    if not options.agent_name and not options.system_prompt:
        return ""
    lines = ["", "<agent>"]
    if options.agent_name:
        lines.append(f"In this conversation you are the custom agent {options.agent_name!r}.")
    if options.description:
        lines.append(f"Purpose: {options.description}")
    if options.system_prompt:
        lines += ["", options.system_prompt.strip()]
    lines.append("</agent>")
    return "\n".join(lines) + "\n"


def skills_section(skills: Sequence[RunSkill]) -> str:
    """The enabled skills for progressive loading: name, description and location."""
    if not skills:
        return ""
    items = "\n".join(
        f"<skill><name>{escape(s.name)}</name><description>{escape(s.description)}"
        f"</description><location>{escape(s.location)}</location></skill>"
        for s in skills
    )
    return (
        "\n<skill_system>\nSkills are folders of instructions, scripts and references for "
        "particular jobs. When a request matches a skill's description, first read its "
        "SKILL.md with read_file (the location below) and follow it; read files it refers "
        "to only when you need them. Skill folders are read-only: write your work to "
        "/mnt/user-data. A message starting with /skill-name activates that skill directly."
        f"\n<available_skills>\n{items}\n</available_skills>\n</skill_system>\n"
    )
