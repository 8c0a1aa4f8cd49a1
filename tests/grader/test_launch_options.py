"""The ``srb-submission`` launcher's option parsing (hand-written: the launcher starts once per
case, so it does not import argparse). What it runs, as whom, is tested in a real stage
container (tests/integrity/test_stage_container.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from srb_tui.grader.boundary.launch import _parse, main
from srb_tui.grader.boundary.slot import SlotLimits, _flat_object, load_limits

REPO = Path(__file__).resolve().parents[2]


def test_options_then_double_dash_then_the_program() -> None:
    args = _parse(["--cwd", "/w", "--timeout=2.5", "--env", "A=1", "--env=B=2=3", "--python",
                   "--", "bin/x", "--cwd", "-q"])
    assert (args.cwd, args.timeout, args.env, args.python) == ("/w", 2.5, ["A=1", "B=2=3"], True)
    assert args.argv == ["bin/x", "--cwd", "-q"]  # after --, the program's own words


def test_the_first_plain_word_starts_the_program() -> None:
    args = _parse(["--timeout", "3", "node", "--python", "x.js"])
    assert args.timeout == 3.0 and args.python is False
    assert args.argv == ["node", "--python", "x.js"]
    assert _parse(["-", "x"]).argv == ["-", "x"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--bogus", "--", "x"], "unknown option '--bogus'"),
        (["--cwd"], "--cwd needs a value"),
        (["--timeout", "soon", "--", "x"], "--timeout 'soon' is not a number"),
        (["--python=yes", "--", "x"], "unknown option '--python=yes'"),
    ],
)
def test_bad_options_are_named(argv: list[str], says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("(", r"\(")):
        _parse(argv)


def test_main_reports_bad_options_with_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--timeout"]) == 2
    err = capsys.readouterr().err
    assert "srb-submission: --timeout needs a value" in err and "usage: srb-submission" in err
    assert main(["--help"]) == 0
    assert capsys.readouterr().err.startswith("usage: srb-submission")
    assert main(["--cwd", "/tmp"]) == 2
    assert "no command given" in capsys.readouterr().err


def test_the_launcher_imports_little() -> None:
    """The launcher starts once per case: it imports os, sys, time, resource and _signal
    (not argparse, runpy, traceback, subprocess, dataclasses, json, typing, enum or
    contextlib, and not the rest of the sandbox)."""
    heavy = ("argparse", "runpy", "traceback", "subprocess", "dataclasses", "shutil", "json",
             "typing", "enum", "contextlib", "srb_tui.grader.boundary.sandbox")
    code = (  # -I -S: no site, as the launcher starts in a stage container
        f"import sys; sys.path.insert(0, {str(REPO)!r}); import srb_tui.grader.boundary.launch\n"
        f"print(' '.join(m for m in {heavy!r} if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                         text=True, env=env, check=True)
    assert out.stdout.strip() == ""


def test_slot_limits_read_without_json_and_fall_back_to_it(tmp_path: Path) -> None:
    written = tmp_path / "sandbox.json"
    written.write_text(json.dumps({"fsize_bytes": 4096, "nproc": 7, "uid_base": 123456}))
    assert load_limits(written) == SlotLimits(fsize_bytes=4096, nproc=7, uid_base=123456)
    pretty = tmp_path / "pretty.json"  # another writer's layout: json reads it
    pretty.write_text('{\n  "nproc": 9,\n  "note": "x, y"\n}\n')
    assert load_limits(pretty) == SlotLimits(nproc=9)
    broken = tmp_path / "broken.json"
    broken.write_text('{"nproc": ')
    assert load_limits(broken) == SlotLimits()  # defaults, as for a missing file
    assert load_limits(tmp_path / "absent.json") == SlotLimits()
    assert _flat_object('{"a": 1, "b": -2}') == {"a": 1, "b": -2}
