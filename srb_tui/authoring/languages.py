"""The languages ``srb tasks new`` can write a task for, and what each one means to a task.

A language is data the scaffold copies into the task it writes: the Debian packages that
install its runtime in the stage images, the file globs and project files that are "its"
source (the offline reviewer's notion of a language, carried by the task in
``tests/audit/data/languages.toml``), the interpreter names a shebang or a spawn names, the
lines that open a definition (how the reviewer recognises copied code) and the calls that
start another process. Nothing here is read at grading time: the task carries its copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from srb_tui.schema.suggest import suggest


@dataclass(frozen=True)
class Language:
    """One language a task can port from or to, as data the task carries."""

    key: str
    title: str
    aliases: tuple[str, ...]
    packages: tuple[str, ...]
    """Debian bookworm packages that install the runtime"""
    globs: tuple[str, ...]
    """file-name globs of this language's source files"""
    project_files: tuple[str, ...]
    """file names that make a tree a project of this language"""
    interpreters: tuple[str, ...]
    """program names of the runtime (in a shebang, or a string naming what to start)"""
    shebang: str
    definition_prefixes: tuple[str, ...]
    spawn_patterns: tuple[str, ...]
    """regular expressions for code of this language that starts another process"""
    build_outputs: tuple[str, ...]
    """names a build or package manager leaves in a tree (``[[artifacts]] exclude``)"""


LANGUAGES: tuple[Language, ...] = (
    Language(
        key="python", title="Python 3", aliases=("py", "python3", "cpython"),
        packages=("python3",),
        globs=("*.py", "*.pyc", "*.pyi", "*.pyo", "*.pyd", "*.pyw"),
        project_files=("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
                       "Pipfile", "tox.ini"),
        interpreters=("python", "python3"),
        shebang="#!/usr/bin/env python3",
        definition_prefixes=("def ", "class ", "async def "),
        spawn_patterns=(r"\bsubprocess\b", r"\bos\.(system|popen|exec\w*|spawn\w*)\s*\(",
                        r"\bpty\.spawn\b"),
        build_outputs=("__pycache__", "*.pyc", "*.pyo", ".pytest_cache", ".mypy_cache",
                       ".ruff_cache", ".venv", "*.egg-info", ".tox"),
    ),
    Language(
        key="node", title="Node.js", aliases=("nodejs", "javascript", "js", "node.js"),
        packages=("nodejs",),
        globs=("*.js", "*.mjs", "*.cjs"),
        project_files=("package.json", "package-lock.json"),
        interpreters=("node", "nodejs"),
        shebang="#!/usr/bin/env node",
        definition_prefixes=("function ", "class ", "async function "),
        spawn_patterns=(r"child_process",
                        r"(?<![.\w])(spawn|spawnSync|execSync|execFile|execFileSync|fork)\s*\(",
                        r"(?<![.\w])exec\s*\(", r"\bnew\s+Worker\s*\("),
        build_outputs=("node_modules", ".npm", "coverage"),
    ),
    Language(
        key="ruby", title="Ruby", aliases=("rb",),
        packages=("ruby",),
        globs=("*.rb", "*.gemspec", "*.rake"),
        project_files=("Gemfile", "Gemfile.lock", "Rakefile"),
        interpreters=("ruby",),
        shebang="#!/usr/bin/env ruby",
        definition_prefixes=("def ", "class ", "module "),
        spawn_patterns=(r"\b(system|spawn|exec)\s*[( ]", r"`[^`]+`", r"%x[({\[]",
                        r"\bOpen3\b", r"\bIO\.popen\b"),
        build_outputs=(".bundle", "vendor/bundle"),
    ),
    Language(
        key="perl", title="Perl 5", aliases=("pl", "perl5"),
        packages=("perl",),
        globs=("*.pl", "*.pm", "*.t"),
        project_files=("Makefile.PL", "Build.PL", "cpanfile", "META.json"),
        interpreters=("perl",),
        shebang="#!/usr/bin/env perl",
        definition_prefixes=("sub ", "package "),
        spawn_patterns=(r"\b(system|exec)\s*[( ]", r"`[^`]+`", r"\bqx[({/]",
                        r"\bopen\s*\(?[^;]*\|"),
        build_outputs=("blib", "_build", "local"),
    ),
    Language(
        key="php", title="PHP", aliases=("php-cli", "php8"),
        packages=("php-cli",),
        globs=("*.php", "*.phtml", "*.inc"),
        project_files=("composer.json", "composer.lock"),
        interpreters=("php",),
        shebang="#!/usr/bin/env php",
        definition_prefixes=("function ", "class ", "public function ", "private function "),
        spawn_patterns=(r"\b(shell_exec|exec|system|passthru|proc_open|popen|pcntl_exec)\s*\(",
                        r"`[^`]+`"),
        build_outputs=("vendor",),
    ),
)


class UnknownLanguage(ValueError):
    """A language name srb has no profile for (the message offers the nearest one)."""


def names() -> list[str]:
    return [lang.key for lang in LANGUAGES]


def find_language(name: str) -> Language:
    """The language ``name`` (its key or an alias, any case), else :class:`UnknownLanguage`
    naming the known ones and the nearest to what was typed."""
    wanted = name.strip().lower()
    for lang in LANGUAGES:
        if wanted == lang.key or wanted in lang.aliases:
            return lang
    spellings = [s for lang in LANGUAGES for s in (lang.key, *lang.aliases)]
    hit = suggest(wanted, spellings, cutoff=0.6)
    hint = ""
    if hit is not None:
        key = next(lang.key for lang in LANGUAGES if hit in (lang.key, *lang.aliases))
        hint = f"; did you mean `{key}`?"
    raise UnknownLanguage(
        f"unknown language {name!r}{hint} (known: {', '.join(names())})"
    )
