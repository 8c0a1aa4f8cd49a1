"""KeyLocator: dotted key paths of raw TOML text mapped to their lines."""

from __future__ import annotations

import tomllib
from pathlib import Path

from srb_tui.schema.locator import KeyLocator, parent_path

DOC = '''\
# a comment with key = "value" in it
schema = "x"          # trailing comment
"quoted key" = 1
dotted.inner = 2

[table]
text = """
fake = "a key inside a string"
[not.a.header]
"""
literal = \'\'\'
also = 'not a key'
\'\'\'
list = [
  "a",   # first
  "b, with comma",
  [1, 2],
]
inline = { x = 1, y = { z = 2 } }

[[item]]
id = "one"
[item.options]
level = "high"

[[item]]
id = "two"

[[nested.gate]]
id = "g0"
[[nested.gate]]
id = "g1"
'''


def test_every_kind_of_key_has_its_line() -> None:
    loc = KeyLocator(DOC)
    expected = {
        "schema": 2,
        "quoted key": 3,
        "dotted": 4,
        "dotted.inner": 4,
        "table": 6,
        "table.text": 7,
        "table.literal": 11,
        "table.list": 14,
        "table.list[0]": 15,
        "table.list[1]": 16,
        "table.list[2]": 17,
        "table.list[2][1]": 17,
        "table.inline": 19,
        "table.inline.y.z": 19,
        "item": 21,
        "item[0]": 21,
        "item[0].id": 22,
        "item[0].options": 23,
        "item[0].options.level": 24,
        "item[1]": 26,
        "item[1].id": 27,
        "nested.gate[0].id": 30,
        "nested.gate[1]": 31,
        "nested.gate[1].id": 32,
    }
    assert {path: loc.exact(path) for path in expected} == expected


def test_strings_and_comments_hide_their_contents() -> None:
    loc = KeyLocator(DOC)
    for path in ("fake", "table.fake", "not", "not.a.header", "also", "table.also", "key"):
        assert loc.exact(path) is None, path


def test_a_missing_key_falls_back_to_its_table() -> None:
    loc = KeyLocator(DOC)
    assert loc.line("item[1].missing") == 26
    assert loc.line("table.list[9]") == 14
    assert loc.line("absent_top_level") is None
    assert loc.line("") is None


def test_parent_path() -> None:
    assert parent_path("a.b[2].c") == "a.b[2]"
    assert parent_path("a.b[2]") == "a.b"
    assert parent_path("a") == ""


def test_escaped_quotes_do_not_end_a_string() -> None:
    text = 'a = "say \\"b = 1\\""\nc = """x \\""" y"""\nd = 4\n'
    assert tomllib.loads(text)["d"] == 4
    loc = KeyLocator(text)
    assert (loc.exact("a"), loc.exact("c"), loc.exact("d"), loc.exact("b")) == (1, 2, 3, None)


def test_every_path_of_the_minimal_task_is_found() -> None:
    root = Path(__file__).resolve().parent / "valid" / "minimal"
    for manifest in sorted(root.rglob("*.toml")):
        text = manifest.read_text()
        loc = KeyLocator(text)
        stack: list[tuple[str, object]] = [("", tomllib.loads(text))]
        while stack:
            path, value = stack.pop()
            children: list[tuple[str, object]] = []
            if isinstance(value, dict):
                children = [(f"{path}.{k}" if path else k, v) for k, v in value.items()]
            elif isinstance(value, list):
                children = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
            for child in children:
                assert loc.exact(child[0]) is not None, (manifest.name, child[0])
            stack.extend(children)
