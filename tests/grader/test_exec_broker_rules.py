"""Who runs an exec a Stage III candidate makes (srb_tui/grader/exec_broker.classify): the
candidate's own uid, or the slot uid as the code under test. One table; the broker applies
it to every execve of every candidate process."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.grader.boundary.exec_rules import classify


@pytest.fixture
def roots(tmp_path: Path) -> tuple[list[str], list[str], Path]:
    tree, work, cand, own = (tmp_path / n for n in ("target", "work", "cand", "candidate"))
    for folder in (tree / "bin", tree / "lib", work, cand / "tmp", own):
        folder.mkdir(parents=True)
    for file in (tree / "bin" / "x", tree / "lib" / "cli.js", tree / "build.sh",
                 own / "c.sh", own / "check.py"):
        file.write_text("")
    return [str(tree)], [str(cand), str(own)], tmp_path


CASES = [
    # (file, argv, cwd, who)
    ("{t}/target/bin/x", ["x", "-a"], "{t}/target", "program"),
    ("./bin/x", ["./bin/x"], "{t}/target", "program"),
    ("/usr/bin/node", ["node", "{t}/target/lib/cli.js", "{t}/cand/tmp/in"], "{t}/cand", "program"),
    ("/usr/bin/node", ["node", "lib/cli.js"], "{t}/target", "program"),
    ("/usr/bin/sh", ["sh", "build.sh", "stage"], "{t}/target", "program"),
    ("/usr/bin/make", ["make", "-j2"], "{t}/target", "program"),
    ("/usr/bin/python3", ["python3", "-"], "{t}/target", "program"),
    ("/usr/bin/python3.11", ["python3.11", "-c", "import json"], "{t}/target", "program"),
    ("/usr/bin/timeout", ["timeout", "5", "{t}/target/bin/x"], "{t}/cand", "candidate"),
    ("/usr/bin/node", ["node", "--require={t}/target/lib/cli.js", "x.js"], "{t}/cand", "program"),
    ("/usr/bin/cp", ["cp", "-a", "{t}/target/.", "/tmp/view/"], "{t}/target", "candidate"),
    ("{t}/work/build/x", ["x"], "{t}/cand", "program"),
    ("/usr/bin/bash", ["bash", "{t}/candidate/c.sh"], "{t}/target", "candidate"),
    ("/usr/bin/python3", ["python3", "{t}/candidate/check.py", "{t}/target/bin/x"],
     "{t}/target", "candidate"),
    ("/usr/bin/mktemp", ["mktemp", "-d", "{t}/cand/tmp/f.XXXXXX"], "{t}/target", "candidate"),
    ("/usr/bin/cmp", ["cmp", "-s", "expected", "actual"], "{t}/cand/tmp", "candidate"),
    ("/usr/bin/diff", ["diff", "-u", "a", "b"], "{t}/target", "candidate"),
    ("/usr/bin/cat", ["cat", "{t}/cand/tmp/out"], "{t}/target", "candidate"),
    ("/usr/bin/mktemp", ["mktemp", "{t}/work/log.XXXXXX"], "{t}/target", "candidate"),
    ("/usr/bin/mkdir", ["mkdir", "-p", "{t}/work"], "{t}/target", "candidate"),
    ("/usr/bin/node", ["node", "{t}/work/out/cli.js"], "{t}/cand", "program"),
    ("/usr/bin/make", ["make"], "{t}/work/build", "program"),
]


@pytest.mark.parametrize(("file", "argv", "cwd", "who"), CASES)
def test_who_runs_an_exec(
    roots: tuple[list[str], list[str], Path], file: str, argv: list[str], cwd: str, who: str
) -> None:
    tree, own, top = roots
    fill = {"t": str(top)}
    got = classify(file.format(**fill), [a.format(**fill) for a in argv], cwd.format(**fill),
                   tree=tree, own=own, built=[str(top / "work")])
    assert got == who
