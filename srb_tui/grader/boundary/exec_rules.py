"""Stage III's exec boundary: who runs an exec a candidate makes, the candidate or the code
under test (:func:`classify`; the broker that acts on it is :mod:`.exec_broker`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _resolve(cwd: str, name: str, *, only_existing: bool = False) -> list[str]:
    """The path ``name`` names from ``cwd`` (and its real path). A relative ``name`` that
    names nothing there (an option, a word) names no path when ``only_existing``."""
    joined = os.path.normpath(os.path.join(cwd, name))
    if only_existing and not name.startswith("/") and not os.path.lexists(joined):
        return []
    found = [joined]
    real = os.path.realpath(joined)
    if real != joined:
        found.append(real)
    return found


CODE_LOADERS = frozenset({
    "python", "pypy", "node", "nodejs", "deno", "bun", "npm", "npx", "yarn", "pnpm",
    "make", "gmake", "cmake", "ctest", "ninja", "meson", "go", "cargo", "java", "mvn",
    "gradle", "ant", "dotnet", "perl", "ruby", "php", "lua", "zig", "tsc", "ts-node",
    "cc", "gcc", "clang", "c++", "g++", "clang++", "tcc", "cpp", "javac", "rustc",
    "gfortran", "ld", "as",
})
"""Tools that load code from their working folder (``python3 -c`` imports it, ``make`` reads
its Makefile, ``node`` resolves ``node_modules`` there): started in the tree, they run it.
Compilers are among them: a candidate cannot read the tree's files (:mod:`..candidates.tree_copy`),
so a compile against the tree's headers (an argument naming the tree) runs as the program, which
can; its source then belongs in ``SRB_WORK`` or the tree, where the slot reads it."""


SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
"""Shells run their script argument: ``sh build.sh`` in the tree is the code under test."""


def _loader(file: str) -> bool:
    name = os.path.basename(file).lower()
    return name.rstrip("0123456789.-") in CODE_LOADERS or name in CODE_LOADERS


def classify(
    file: str,
    argv: Sequence[str],
    cwd: str,
    *,
    tree: Sequence[str],
    own: Sequence[str],
    built: Sequence[str] = (),
) -> str:
    """"candidate" or "program": who an exec of ``file`` with ``argv`` in ``cwd`` belongs to
    (``tree``: the tree under test; ``built``: where tasks build it, ``SRB_WORK``; ``own``:
    the candidate's own files), first rule that applies:

    1. the file started is the candidate's own, or in the tree or ``built``;
    2. its first argument that is not an option is the candidate's own, or, for a shell or
       a tool that loads code (an interpreter's script), in the tree or ``built``;
    3. it loads code (:data:`CODE_LOADERS`) and any argument names a path in the tree
       (``node --require=$SRB_TARGET/x.js``); a wrapper (``timeout``, ``env``, ``setsid``)
       is the candidate's, and the program it execs is caught by rule 1;
    4. it starts in the tree or ``built`` and loads code from its working folder
       (:data:`CODE_LOADERS`);
    5. otherwise it is the candidate's (``cmp``, ``cp -a $SRB_TARGET/. view/``, ``mktemp``,
       ``mkdir`` in ``SRB_WORK``, ``diff``): tools that read the tree but run none of it.
    """
    code = [*tree, *built]
    for path in _resolve(cwd, file):
        if _inside(path, own):
            return "candidate"
        if _inside(path, code):
            return "program"
    rest = list(argv[1:])
    script = next((a for a in rest if a and not a.startswith("-")), None)
    if script is not None:
        for path in _resolve(cwd, script, only_existing=True):
            if _inside(path, own) and os.path.exists(path):
                return "candidate"
            runs_it = _loader(file) or os.path.basename(file) in SHELLS
            if runs_it and _inside(path, code):
                return "program"
    for arg in rest if _loader(file) else ():
        names = [arg, arg.split("=", 1)[1]] if "=" in arg else [arg]
        paths = [p for n in names if n for p in _resolve(cwd, n, only_existing=True)]
        if any(_inside(p, tree) for p in paths):
            return "program"
    in_tree = _inside(os.path.normpath(cwd), code) or _inside(os.path.realpath(cwd), code)
    if in_tree and _loader(file):
        return "program"
    return "candidate"


# --------------------------------------------------------------------------- the broker
