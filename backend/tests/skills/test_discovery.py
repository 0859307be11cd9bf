"""SKILL.md validation and discovery: bad skills are reported and skipped."""

from __future__ import annotations

import pytest

from pronghorn.skills.discovery import REPO_PUBLIC, Root, discover
from pronghorn.skills.frontmatter import parse
from pronghorn.skills.model import SkillInvalid
from skills.kit import skill_md, write_skill


def test_parse_reads_every_field():
    doc = parse(
        skill_md(
            "pdf-tools",
            extra="license: MIT\nversion: 2\nallowed-tools: read_file, bash\nmetadata:\n  a: b\n",
        ),
        folder_name="pdf-tools",
    )
    assert doc.name == "pdf-tools" and doc.description == "Does a useful thing."
    assert doc.license == "MIT" and doc.version == "2"
    assert doc.allowed_tools == ("read_file", "bash")
    assert doc.metadata == (("a", "b"),)
    assert doc.body.startswith("# pdf-tools")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("no front matter", "must start with a '---'"),
        ("---\nname: x\n", "not closed"),
        ("---\n- a\n---\n", "must be a YAML mapping"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        (skill_md("Bad_Name"), "not hyphen-case"),
        (skill_md("-lead"), "not hyphen-case"),
        (skill_md("double--hyphen"), "not hyphen-case"),
        (skill_md("a" * 65), "longer than 64"),
        ("---\nname: ok\n---\n", "'description' is required"),
        ("---\nname: ok\ndescription: '   '\n---\n", "'description' is required"),
        (skill_md("ok", extra="color: red\n"), "unknown front matter keys: color"),
        (skill_md("ok", extra="allowed-tools: 3\n"), "'allowed-tools' must be"),
        (skill_md("other"), "differs from its folder"),
    ],
)
def test_validation_errors(text: str, error: str):
    with pytest.raises(SkillInvalid, match=error):
        parse(text, folder_name="ok")


def test_a_64_character_name_is_fine():
    name = "a" * 64
    assert parse(skill_md(name), folder_name=name).name == name


def test_discovery_skips_bad_skills_and_reports_them(tmp_path):
    public, extra, custom = tmp_path / "public", tmp_path / "extra", tmp_path / "custom"
    write_skill(public, "good-one")
    write_skill(public, "broken", "---\nname: broken\n---\nno description\n")
    (public / "not-a-skill").mkdir()  # no SKILL.md: silently ignored
    write_skill(extra, "good-one")  # a duplicate name: the first wins
    write_skill(extra, "second")
    write_skill(custom, "mine")
    (custom / "linked").symlink_to(public / "good-one")
    found = discover(
        [
            Root(public, "public"),
            Root(extra, "public"),
            Root(custom, "custom"),
            Root(tmp_path / "missing", "public"),
        ]
    )
    assert [(s.name, s.category) for s in found.skills] == [
        ("good-one", "public"),
        ("second", "public"),
        ("mine", "custom"),
    ]
    errors = {p.path.removeprefix(str(tmp_path)): p.error for p in found.problems}
    assert "'description' is required" in errors["/public/broken/SKILL.md"]
    assert "already loaded" in errors["/extra/good-one"]
    assert "symlink" in errors["/custom/linked"]
    mine = found.named("mine")
    assert mine is not None and mine.location == "/mnt/skills/custom/mine/SKILL.md"


def test_shipped_skills_are_valid_and_useful():
    found = discover([Root(REPO_PUBLIC, "public")])
    assert not found.problems
    names = {s.name for s in found.skills}
    assert {"data-analysis", "research-report", "chart-visualization", "skill-creator"} <= names
    for skill in found.skills:
        assert len(skill.description) > 60  # says what and when
