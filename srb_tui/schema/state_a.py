"""Model and parser of srb's own ``[srb.state_a]`` table in a task's task.toml.

The published task schema ships State A as ``environment/original.tar.gz``; srb lets a
task say instead where State A comes from (a registry package, a URL, a git commit) and
which digest pins it. This module only reads and checks the table; fetching lives in
``srb_tui.sources``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from srb_tui.schema.problems import Problem

StateAKind = Literal["archive", "pypi", "npm", "url", "git"]

KINDS: tuple[str, ...] = get_args(StateAKind)
_Reporter = Callable[[str, str], None]
TABLE = "srb.state_a"
KNOWN_KEYS: tuple[str, ...] = ("kind", "spec", "url", "commit", "sha256", "strip_components")

# Which of spec/url/commit each kind needs; every one of the three not listed is forbidden.
_REQUIRED: dict[str, tuple[str, ...]] = {
    "archive": (),
    "pypi": ("spec",),
    "npm": ("spec",),
    "url": ("url",),
    "git": ("url", "commit"),
}
_DEFAULT_STRIP: dict[str, int] = {"archive": 0, "pypi": 1, "npm": 1, "url": 0, "git": 0}

_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
# PEP 508 project name, then an exact PEP 440-style version (no ranges, no wildcards).
_PYPI_SPEC = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r"==(?P<version>[0-9][A-Za-z0-9.!+_-]*)"
)
# npm package name (optionally @scope/), then an exact semver version.
_NPM_SPEC = re.compile(
    r"(?P<name>(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)"
    r"@(?P<version>(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)"
    r"(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)"
)
_HTTP_URL = re.compile(r"https?://[^\s/?#]+[^\s]*")
_GIT_URL = re.compile(r"(?:(?:https?|ssh|git|file)://[^\s]+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+)")


@dataclass(frozen=True)
class StateASource:
    """Where a task's State A comes from and the digest that pins it.

    ``sha256`` is the archive's digest for every kind but ``git``, where it is the
    content digest of the checked-out tree (``srb_tui.sources.content_digest``).
    ``strip_components`` is already resolved to the kind's default when not given.
    """

    kind: StateAKind
    sha256: str
    spec: str | None = None
    url: str | None = None
    commit: str | None = None
    strip_components: int = 0

    @property
    def package(self) -> tuple[str, str] | None:
        """``(name, version)`` of a pypi/npm spec, else None."""
        if self.spec is None:
            return None
        pattern = _PYPI_SPEC if self.kind == "pypi" else _NPM_SPEC
        match = pattern.fullmatch(self.spec)
        return None if match is None else (match["name"], match["version"])


_TYPE_NAMES: tuple[tuple[type, str], ...] = (  # bool first: a bool is an int
    (bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
    (list, "an array"), (Mapping, "a table"))


def _type_name(value: object) -> str:
    return next((name for kind, name in _TYPE_NAMES if isinstance(value, kind)),
                type(value).__name__)


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_state_a(
    table: Mapping[str, object], file: str
) -> tuple[StateASource | None, list[Problem]]:
    """Check an ``[srb.state_a]`` table and build its :class:`StateASource`.

    Every problem is reported at once; the source is None whenever there is an error.
    """
    problems: list[Problem] = []

    def err(key: str, message: str) -> None:
        problems.append(Problem(file=file, key=f"{TABLE}.{key}" if key else TABLE, message=message))

    if not isinstance(table, Mapping):
        err("", f"[{TABLE}] must be a table, not {_type_name(table)}")
        return None, problems

    for key in table:
        if key not in KNOWN_KEYS:
            near = difflib.get_close_matches(str(key), KNOWN_KEYS, n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            err(str(key), f"unknown key '{key}'{hint}; known keys: {', '.join(KNOWN_KEYS)}")

    strings: dict[str, str] = {}
    for key in ("kind", "spec", "url", "commit", "sha256"):
        if key not in table:
            continue
        value = table[key]
        if not isinstance(value, str):
            err(key, f"{key} must be a string, not {_type_name(value)}")
        elif not value.strip():
            err(key, f"{key} must not be empty")
        else:
            strings[key] = value

    kind = strings.get("kind")
    if "kind" not in table:
        err("kind", f"kind is required (one of: {', '.join(KINDS)})")
    elif kind is not None and kind not in KINDS:
        near = difflib.get_close_matches(kind.lower(), KINDS, n=1, cutoff=0.5)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        err("kind", f"kind '{_short(kind)}' is not one of: {', '.join(KINDS)}{hint}")
        kind = None

    sha = strings.get("sha256")
    if "sha256" not in table:
        what = "content digest of the checked-out tree" if kind == "git" else "archive digest"
        err("sha256", f"sha256 is required (the {what}, 64 lowercase hex digits)")
    elif sha is not None and not _SHA256.fullmatch(sha):
        err(
            "sha256",
            f"sha256 must be 64 lowercase hex digits, got '{_short(sha)}' ({len(sha)} characters)",
        )
        sha = None

    commit = strings.get("commit")
    if commit is not None and not _COMMIT.fullmatch(commit):
        err(
            "commit",
            f"commit must be a full 40-digit lowercase hex commit id, got '{_short(commit)}'",
        )
        commit = None

    strip = _parse_strip(table, kind, err)

    if kind is not None:
        required = _REQUIRED[kind]
        for key in ("spec", "url", "commit"):
            if key in required and key not in table:
                err(key, f'{key} is required when kind = "{kind}"')
            elif key not in required and key in table:
                err(key, f'{key} is not allowed when kind = "{kind}"')
        spec = strings.get("spec")
        if spec is not None and kind in ("pypi", "npm"):
            _check_spec(kind, spec, err)
        url = strings.get("url")
        if url is not None and kind == "url" and not _HTTP_URL.fullmatch(url):
            err("url", f"url must be an http:// or https:// URL, got '{_short(url)}'")
        if url is not None and kind == "git" and not _GIT_URL.fullmatch(url):
            err(
                "url",
                "url must be a git repository URL (https://, http://, ssh://, git://, "
                f"file:// or user@host:path), got '{_short(url)}'",
            )

    if problems or kind is None or sha is None or strip is None:
        return None, problems
    return (
        StateASource(
            kind=kind,  # type: ignore[arg-type]  # checked against KINDS above
            sha256=sha,
            spec=strings.get("spec"),
            url=strings.get("url"),
            commit=commit,
            strip_components=strip,
        ),
        [],
    )


def _parse_strip(table: Mapping[str, object], kind: str | None, err: _Reporter) -> int | None:
    """The resolved strip_components, or None after reporting a problem."""
    if "strip_components" not in table:
        return _DEFAULT_STRIP.get(kind or "", 0)
    value = table["strip_components"]
    if kind == "git":
        err(
            "strip_components",
            'strip_components is not allowed when kind = "git" '
            "(a checkout has no archive prefix to strip)",
        )
        return None
    if isinstance(value, bool):
        err("strip_components", "strip_components must be an integer, not a boolean")
        return None
    if isinstance(value, str):
        quoted = value.strip()
        if quoted.isdigit():
            err(
                "strip_components",
                f"strip_components must be an integer, not a quoted "
                f"string (write {quoted} without quotes)",
            )
        else:
            err("strip_components", "strip_components must be an integer, not a string")
        return None
    if not isinstance(value, int):
        err("strip_components", f"strip_components must be an integer, not {_type_name(value)}")
        return None
    if value < 0:
        err("strip_components", f"strip_components must be ≥ 0, got {value}")
        return None
    return value


def _check_spec(kind: str, spec: str, err: _Reporter) -> None:
    if kind == "pypi" and not _PYPI_SPEC.fullmatch(spec):
        err(
            "spec",
            f"spec must be 'name==version' with one exact version "
            f"(e.g. \"sqlparse==0.5.3\"), got '{_short(spec)}'",
        )
    if kind == "npm" and not _NPM_SPEC.fullmatch(spec):
        err(
            "spec",
            f"spec must be 'name@version' with one exact semver version "
            f'(e.g. "acorn@8.11.3" or "@scope/name@1.0.0"), got \'{_short(spec)}\'',
        )
