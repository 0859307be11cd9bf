"""Tolerant parsing of the memory model's JSON answers."""

from __future__ import annotations

import pytest

from pronghorn.memory.parse import parse_json_object

GOOD = {"new_facts": [{"content": "Likes tea", "category": "preference"}]}


@pytest.mark.parametrize(
    "text",
    [
        '{"new_facts": [{"content": "Likes tea", "category": "preference"}]}',
        '```json\n{"new_facts": [{"content": "Likes tea", "category": "preference"}]}\n```',
        'Sure! Here is the update:\n{"new_facts": [{"content": "Likes tea", '
        '"category": "preference"},],}\nHope that helps.',
        '```\n{"new_facts": [{"content": "Likes tea", "category": "preference",}]}\n```',
        '{\n  // facts\n  "new_facts": [{"content": "Likes tea", "category": "preference"}]\n}',
        "\u201cignored\u201d {\u201cnew_facts\u201d: [{\u201ccontent\u201d: \u201cLikes tea\u201d, "
        "\u201ccategory\u201d: \u201cpreference\u201d}]}",
        '{"new_facts": [{"content": "Likes tea", "category": "preference"}]',  # cut off
    ],
)
def test_sloppy_json_is_forgiven(text: str) -> None:
    assert parse_json_object(text) == GOOD


def test_python_literals_and_braces_inside_strings() -> None:
    text = 'Result: {"a": True, "b": None, "c": "a } brace", "d": [1, 2,]} done'
    assert parse_json_object(text) == {"a": True, "b": None, "c": "a } brace", "d": [1, 2]}


def test_smart_quotes_inside_a_valid_string_are_kept() -> None:
    text = '{"content": "He said \u201chi\u201d"}'
    assert parse_json_object(text) == {"content": "He said \u201chi\u201d"}


@pytest.mark.parametrize("text", ["", "no json here", "[1, 2, 3]", "{not: json at all"])
def test_garbage_is_none(text: str) -> None:
    assert parse_json_object(text) is None
