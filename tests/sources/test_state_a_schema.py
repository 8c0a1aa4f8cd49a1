"""parse_state_a: the [srb.state_a] table of task.toml, good and bad."""

from __future__ import annotations

import tomllib

import pytest

from srb_tui.schema.problems import Problem
from srb_tui.schema.state_a import StateASource, parse_state_a

SHA = "09f67787f56a0b16ecdbde1bfc7f5d9c3371ca683cfeaa8e6ff60b4807ec9272"
COMMIT = "c434ffe504f790e9cebeae12c1720c446cd7f8f3"
FILE = "tasks/t1/task.toml"


def table(text: str) -> dict[str, object]:
    data = tomllib.loads(text)
    return data["srb"]["state_a"]  # type: ignore[no-any-return]


def messages(problems: list[Problem]) -> list[tuple[str, str]]:
    return [(p.key, p.message) for p in problems]


def test_pypi_from_toml_defaults_strip_to_one() -> None:
    source, problems = parse_state_a(
        table(f'''
[srb.state_a]
kind = "pypi"
spec = "sqlparse==0.5.3"
sha256 = "{SHA}"
'''),
        FILE,
    )
    assert problems == []
    assert source == StateASource(
        kind="pypi", sha256=SHA, spec="sqlparse==0.5.3", strip_components=1
    )
    assert source.package == ("sqlparse", "0.5.3")


@pytest.mark.parametrize(
    ("spec", "package"),
    [
        ("acorn@8.11.3", ("acorn", "8.11.3")),
        ("@types/node@20.0.0", ("@types/node", "20.0.0")),
        ("left-pad@1.3.0-beta.1+build.5", ("left-pad", "1.3.0-beta.1+build.5")),
    ],
)
def test_npm_specs_including_scoped(spec: str, package: tuple[str, str]) -> None:
    source, problems = parse_state_a({"kind": "npm", "spec": spec, "sha256": SHA}, FILE)
    assert problems == []
    assert source is not None
    assert source.package == package
    assert source.strip_components == 1


def test_url_git_archive_defaults() -> None:
    url, p1 = parse_state_a(
        {
            "kind": "url",
            "url": "https://example.org/a.tar.gz",
            "sha256": SHA,
            "strip_components": 2,
        },
        FILE,
    )
    git, p2 = parse_state_a(
        {"kind": "git", "url": "file:///tmp/repo", "commit": COMMIT, "sha256": SHA}, FILE
    )
    archive, p3 = parse_state_a({"kind": "archive", "sha256": SHA}, FILE)
    assert (p1, p2, p3) == ([], [], [])
    assert url == StateASource("url", SHA, url="https://example.org/a.tar.gz", strip_components=2)
    assert git == StateASource("git", SHA, url="file:///tmp/repo", commit=COMMIT)
    assert archive == StateASource("archive", SHA, strip_components=0)


def test_unknown_key_with_near_miss_and_missing_sha() -> None:
    source, problems = parse_state_a({"kind": "pypi", "spec": "a==1", "sha265": SHA}, FILE)
    assert source is None
    assert messages(problems) == [
        (
            "srb.state_a.sha265",
            "unknown key 'sha265' (did you mean 'sha256'?); known keys: "
            "kind, spec, url, commit, sha256, strip_components",
        ),
        ("srb.state_a.sha256", "sha256 is required (the archive digest, 64 lowercase hex digits)"),
    ]
    assert all(p.file == FILE and p.kind == "error" for p in problems)


def test_every_problem_reported_at_once() -> None:
    source, problems = parse_state_a(
        {
            "kind": "pypi",
            "spec": "sqlparse>=0.5",
            "url": "https://x.org/a.tgz",
            "commit": "abc",
            "sha256": SHA.upper(),
            "strip_components": "1",
        },
        FILE,
    )
    assert source is None
    assert messages(problems) == [
        (
            "srb.state_a.sha256",
            f"sha256 must be 64 lowercase hex digits, got '{SHA.upper()}' (64 characters)",
        ),
        ("srb.state_a.commit", "commit must be a full 40-digit lowercase hex commit id, got 'abc'"),
        (
            "srb.state_a.strip_components",
            "strip_components must be an integer, not a quoted string (write 1 without quotes)",
        ),
        ("srb.state_a.url", 'url is not allowed when kind = "pypi"'),
        ("srb.state_a.commit", 'commit is not allowed when kind = "pypi"'),
        (
            "srb.state_a.spec",
            "spec must be 'name==version' with one exact version "
            "(e.g. \"sqlparse==0.5.3\"), got 'sqlparse>=0.5'",
        ),
    ]


def test_kind_missing_unknown_and_typed() -> None:
    _s, missing = parse_state_a({"sha256": SHA}, FILE)
    _s, typo = parse_state_a({"kind": "pipy", "sha256": SHA}, FILE)
    _s, boolean = parse_state_a({"kind": True, "sha256": SHA}, FILE)
    assert messages(missing) == [
        ("srb.state_a.kind", "kind is required (one of: archive, pypi, npm, url, git)")
    ]
    assert messages(typo) == [
        (
            "srb.state_a.kind",
            "kind 'pipy' is not one of: archive, pypi, npm, url, git (did you mean 'pypi'?)",
        )
    ]
    assert messages(boolean) == [("srb.state_a.kind", "kind must be a string, not a boolean")]


def test_kind_specific_required_keys() -> None:
    _s, git = parse_state_a({"kind": "git", "sha256": SHA, "strip_components": 1}, FILE)
    _s, npm = parse_state_a({"kind": "npm", "sha256": SHA, "spec": "acorn@^8.0.0"}, FILE)
    _s, url = parse_state_a({"kind": "url", "sha256": SHA, "url": "ftp://x/a.tgz"}, FILE)
    _s, archive = parse_state_a({"kind": "archive", "sha256": SHA, "spec": "a==1"}, FILE)
    assert messages(git) == [
        (
            "srb.state_a.strip_components",
            'strip_components is not allowed when kind = "git" '
            "(a checkout has no archive prefix to strip)",
        ),
        ("srb.state_a.url", 'url is required when kind = "git"'),
        ("srb.state_a.commit", 'commit is required when kind = "git"'),
    ]
    assert messages(npm) == [
        (
            "srb.state_a.spec",
            "spec must be 'name@version' with one exact semver version "
            '(e.g. "acorn@8.11.3" or "@scope/name@1.0.0"), '
            "got 'acorn@^8.0.0'",
        )
    ]
    assert messages(url) == [
        ("srb.state_a.url", "url must be an http:// or https:// URL, got 'ftp://x/a.tgz'")
    ]
    assert messages(archive) == [("srb.state_a.spec", 'spec is not allowed when kind = "archive"')]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "strip_components must be an integer, not a boolean"),
        (-1, "strip_components must be ≥ 0, got -1"),
        (1.5, "strip_components must be an integer, not a float"),
        ("one", "strip_components must be an integer, not a string"),
    ],
)
def test_strip_components_types(value: object, message: str) -> None:
    source, problems = parse_state_a(
        {"kind": "url", "url": "https://x.org/a.tgz", "sha256": SHA, "strip_components": value},
        FILE,
    )
    assert source is None
    assert messages(problems) == [("srb.state_a.strip_components", message)]


def test_short_sha_and_non_table() -> None:
    _s, short = parse_state_a({"kind": "archive", "sha256": "abc123"}, FILE)
    assert messages(short) == [
        (
            "srb.state_a.sha256",
            "sha256 must be 64 lowercase hex digits, got 'abc123' (6 characters)",
        )
    ]
    source, bad = parse_state_a(["kind"], FILE)  # type: ignore[arg-type]
    assert source is None
    assert messages(bad) == [("srb.state_a", "[srb.state_a] must be a table, not an array")]
    assert str(bad[0]) == f"{FILE} [srb.state_a]: [srb.state_a] must be a table, not an array"
