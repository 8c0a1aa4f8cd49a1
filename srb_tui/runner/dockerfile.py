"""What a Dockerfile says about its inputs: declared build arguments and FROM references.

Stdlib only. Published stage Dockerfiles take their inputs as ``ARG INFRA_IMAGE=…`` /
``FROM ${INFRA_IMAGE} AS infra`` and pin vendor images by digest; srb passes only the
build arguments a file declares, resolves every ``FROM`` (and ``COPY --from=<image>``) to the
image reference it names, and can substitute an operator's local image for a reference
(the image map) in a rewritten copy of the file, never in the task's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
_COPY_FROM = re.compile(r"(--from=)(\S+)")


@dataclass(frozen=True)
class DockerfileFacts:
    """Declared ``ARG`` names (with defaults, ``None`` when none), the build stages'
    names, and the image references the file builds from, in order."""

    args: dict[str, str | None] = field(default_factory=dict)
    stages: frozenset[str] = frozenset()
    refs: tuple[str, ...] = ()


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line index, joined instruction) with continuations and comments
    folded, as the builder reads them."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for index, raw in enumerate(text.splitlines()):
        line = raw.rstrip()
        if not buf:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            start = index
        elif line.lstrip().startswith("#"):
            continue
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, " ".join(part.strip() for part in buf)))
        buf = []
    if buf:
        out.append((start, " ".join(part.strip() for part in buf)))
    return out


def substitute(value: str, env: Mapping[str, str | None]) -> str:
    """``$NAME`` / ``${NAME}`` / ``${NAME:-default}`` as the builder expands them."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        found = env.get(name)
        if found is None or found == "":
            return match.group(2) or ""
        return found

    return _VAR.sub(one, value)


def _from_parts(instruction: str) -> tuple[str, str | None]:
    """(image token, stage alias) of a FROM instruction."""
    tokens = [t for t in instruction.split()[1:] if not t.startswith("--")]
    image = tokens[0] if tokens else ""
    alias = tokens[2] if len(tokens) >= 3 and tokens[1].lower() == "as" else None
    return image, alias


def read_dockerfile(text: str, buildargs: Mapping[str, str] | None = None) -> DockerfileFacts:
    """Declared args and resolved image references (``scratch`` and earlier stages left out).

    Global ``ARG`` defaults (before the first FROM) and ``buildargs`` resolve ``FROM`` lines;
    ``ARG`` lines inside a stage count as declared too (the builder consumes them)."""
    given = dict(buildargs or {})
    declared: dict[str, str | None] = {}
    scope: dict[str, str | None] = {}
    seen_from = False
    stages: set[str] = set()
    refs: list[str] = []
    for _index, line in logical_lines(text):
        word = line.split(None, 1)[0].upper()
        rest = line[len(word):].strip()
        if word == "ARG":
            for item in rest.split():
                name, _, default = item.partition("=")
                declared.setdefault(name, default if "=" in item else None)
                if not seen_from:
                    scope[name] = given.get(name, default if "=" in item else None)
        elif word == "FROM":
            seen_from = True
            image, alias = _from_parts(line)
            resolved = substitute(image, scope)
            if resolved and resolved.lower() != "scratch" and resolved not in stages:
                refs.append(resolved)
            if alias:
                stages.add(alias)
        elif word == "COPY":
            match = _COPY_FROM.search(rest)
            if match:
                source = substitute(match.group(2), scope)
                if source not in stages and not source.isdigit() and _looks_like_image(source):
                    refs.append(source)
    return DockerfileFacts(args=declared, stages=frozenset(stages),
                           refs=tuple(dict.fromkeys(refs)))


def _looks_like_image(value: str) -> bool:
    return any(mark in value for mark in (":", "/", "@"))


def rewrite_refs(
    text: str, mapping: Mapping[str, str], buildargs: Mapping[str, str] | None = None
) -> tuple[str, list[tuple[str, str]]]:
    """A copy of the file whose FROM / COPY --from references that ``mapping`` names point at
    the mapped images instead; (new text, [(reference, replacement), ...])."""
    if not mapping:
        return text, []
    given = dict(buildargs or {})
    scope: dict[str, str | None] = {}
    seen_from = False
    lines = text.splitlines()
    done: list[tuple[str, str]] = []
    for index, line in logical_lines(text):
        word = line.split(None, 1)[0].upper()
        if word == "ARG" and not seen_from:
            for item in line.split()[1:]:
                name, _, default = item.partition("=")
                scope[name] = given.get(name, default if "=" in item else None)
        elif word == "FROM":
            seen_from = True
            image, _alias = _from_parts(line)
            target = mapping.get(substitute(image, scope))
            if target and image in lines[index]:
                lines[index] = lines[index].replace(image, target, 1)
                done.append((substitute(image, scope), target))
        elif word == "COPY":
            match = _COPY_FROM.search(line)
            if match:
                source = substitute(match.group(2), scope)
                target = mapping.get(source)
                if target and match.group(0) in lines[index]:
                    lines[index] = lines[index].replace(match.group(0), f"--from={target}", 1)
                    done.append((source, target))
    trailing = "\n" if text.endswith("\n") else ""
    return "\n".join(lines) + trailing, done
