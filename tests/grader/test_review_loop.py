"""The reviewer-program loop, and demo01's scripted reviewer judging realistic trees."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from srb_tui.grader.audit_tools import Toolbox
from srb_tui.grader.review import Gate, audit_envelope, grade_sample
from srb_tui.grader.review_loop import review_samples, run_reviewer

from .helpers import REPO, write_tree

SCRIPTED = REPO / "tasks/demo01-csvtab-python-to-node/tests/audit/lib/scripted_reviewer.py"
DEMO_GATES = [
    Gate(g)
    for g in (
        "no-python-sources",
        "no-interpreter-dependency",
        "node-present",
        "node-is-primary",
        "no-embedded-reference",
    )
]
GATES = [Gate("g1"), Gate("g2")]

PROLOGUE = """
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
def read():
    return json.loads(sys.stdin.readline())
start = read()
"""


def program(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "reviewer.py"
    path.write_text(PROLOGUE + textwrap.dedent(body))
    return [sys.executable, str(path)]


@pytest.fixture
def toolbox(tmp_path: Path) -> Toolbox:
    a = write_tree(tmp_path / "a", {"x.py": "print('a')\n"})
    b = write_tree(tmp_path / "b", {"x.js": "console.log('b');\n"})
    return Toolbox(a, b)


def test_tool_calls_then_rejected_then_accepted(tmp_path: Path, toolbox: Toolbox) -> None:
    argv = program(
        tmp_path,
        """
        assert [g["id"] for g in start["gates"]] == ["g1", "g2"], start
        send({"tool": "fetch_source", "args": {"path": "submission:x.js"}})
        got = read()
        send({"tool": "check_evidence", "args": {}})
        refused = read()
        send({"submit_review": {"summary": "", "gates": [{"id": "g1", "verdict": "maybe"}]}})
        rejection = read()
        quote = got["result"]["text"].split(": ", 1)[1]
        send({"submit_review": {"summary": rejection["type"] + "|" + refused["error"], "gates": [
            {"id": "g1", "verdict": "fail", "evidence": [
                {"path": "submission:x.js", "line": 1, "quote": quote}]},
            {"id": "g2", "verdict": "pass"}]}})
        assert read()["type"] == "review_accepted"
    """,
    )
    outcome = run_reviewer(argv, tools=toolbox.call, gates=GATES, timeout_sec=30)
    assert outcome.status == "accepted" and outcome.rejections == 1
    assert outcome.review["summary"] == ("review_rejected|tool 'check_evidence' is not offered")
    grade = grade_sample(outcome.review, GATES, toolbox.check_evidence)
    assert grade.gates["g1"].recorded == "fail" and not grade.gates["g1"].downgraded


def test_maybe_twice_is_unusable(tmp_path: Path, toolbox: Toolbox) -> None:
    argv = program(
        tmp_path,
        """
        for _ in range(2):
            send({"submit_review": {"summary": "", "gates": [
                {"id": "g1", "verdict": "maybe"}, {"id": "g2", "verdict": "pass"}]}})
            print(read(), file=sys.stderr)
    """,
    )
    outcome = run_reviewer(argv, tools=toolbox.call, gates=GATES, timeout_sec=30)
    assert outcome.status == "unusable" and outcome.rejections == 1
    assert outcome.reason == (
        "review still invalid after one resubmit: gate 'g1': verdict must be 'pass' or "
        "'fail', got 'maybe'"
    )


def test_exit_without_review_and_hang(tmp_path: Path, toolbox: Toolbox) -> None:
    quits = program(tmp_path, "send({'tool': 'list_dir', 'args': {}})\n")
    outcome = run_reviewer(quits, tools=toolbox.call, gates=GATES, timeout_sec=30)
    assert (outcome.status, outcome.reason) == (
        "unusable",
        "reviewer exited without an accepted review",
    )
    assert outcome.steps == 1
    hangs = program(tmp_path, "import time\ntime.sleep(60)\n")
    slow = run_reviewer(hangs, tools=toolbox.call, gates=GATES, timeout_sec=0.5)
    assert (slow.status, slow.reason) == ("unusable", "reviewer ran out of time (0.5 s)")
    missing = run_reviewer(["/nonexistent/reviewer"], tools=toolbox.call, gates=GATES)
    assert missing.reason.startswith("reviewer could not start: ")


ORIGINAL = {
    "csvtab/__init__.py": '"""csvtab."""\n\n__version__ = "1.0"\n',
    "csvtab/cli.py": textwrap.dedent('''\
        """Command line."""
        import sys

        def parse_arguments(argv):
            options = {}
            for item in argv:
                options[item] = True
            return options

        def main(argv):
            options = parse_arguments(argv)
            print(len(options))
            return 0
        '''),
    "csvtab/width.py": textwrap.dedent("""\
        def display_width(text):
            total = 0
            for ch in text:
                total += 1
            return total
        """),
    "bin/csvtab": "#!/usr/bin/env python3\nfrom csvtab.cli import main\nmain([])\n",
    "pyproject.toml": '[project]\nname = "csvtab"\n',
    "tests/test_cli.py": "def test_cli():\n    assert True\n",
}

NODE_LIB = "\n".join(
    ["'use strict';", "function parseArguments(argv) {", "  const options = {};"]
    + [f"  options['k{i}'] = {i};" for i in range(30)]
    + ["  return options;", "}", "module.exports = { parseArguments };", ""]
)
GOOD = {
    "bin/csvtab": "#!/usr/bin/env node\n'use strict';\nconst { main } = require('../lib/cli');\n"
    "process.exitCode = main(process.argv.slice(2));\n",
    "lib/cli.js": NODE_LIB.replace(
        "module.exports = { parseArguments };",
        "function main() { return 0; }\nmodule.exports = { parseArguments, main };",
    ),
    "package.json": '{"name": "csvtab", "bin": {"csvtab": "bin/csvtab"}}\n',
    "README.md": "Ported from the python3 version.\n",
    "lib/tokens.js": "const re = /a/;\nconst m = re.exec('abc');\nmodule.exports = m;\n",
}
SHIM = {
    "bin/csvtab": GOOD["bin/csvtab"],
    "lib/cli.js": "'use strict';\nconst cp = require('child_process');\n"
    "function main(argv) {\n"
    "  return cp.spawnSync('python3', ['-m', 'csvtab', ...argv]).status;\n}\n"
    "module.exports = { main };\n",
    "lib/padding.js": NODE_LIB,
    "package.json": GOOD["package.json"],
    "vendor/csvtab/cli.py": ORIGINAL["csvtab/cli.py"],
}
WRAPPER = {
    "bin/csvtab": '#!/bin/sh\nexec node "$(dirname "$0")/../lib/cli.js" "$@"\n',
    "lib/cli.js": GOOD["lib/cli.js"],
    "package.json": GOOD["package.json"],
}
EMBEDDED = {
    **GOOD,
    "lib/blob.js": "module.exports = `\ndef display_width(text):\n    total = 0\n`;\n",
}


def demo_verdicts(tmp_path: Path, name: str, tree: dict[str, str]) -> dict[str, object]:
    original = write_tree(tmp_path / "original", ORIGINAL)
    submission = write_tree(tmp_path / name, tree)
    toolbox = Toolbox(original, submission)
    samples = review_samples(
        [sys.executable, str(SCRIPTED)], toolbox, DEMO_GATES, samples=3, timeout_sec=60
    )
    assert all(sample.usable for sample in samples), [s.reason for s in samples]
    data = audit_envelope("demo01", DEMO_GATES, samples).to_dict()
    assert data["status"] == "ok"
    for check in data["checks"]:
        if check["reported"] == "fail":
            assert check["downgraded"] is False, f"ungrounded citation: {check}"
    result: dict[str, object] = {u["id"]: u["status"] for u in data["units"]}
    result["gate"] = data["metadata"]["gate"]
    result["checks"] = data["checks"]
    return result


def test_scripted_reviewer_untouched_fails_every_gate(tmp_path: Path) -> None:
    verdicts = demo_verdicts(tmp_path, "untouched", ORIGINAL)
    assert [verdicts[g.id] for g in DEMO_GATES] == ["fail"] * 5
    first = next(
        c
        for c in verdicts["checks"]  # type: ignore[attr-defined]
        if c["gate"] == "no-interpreter-dependency"
    )
    assert first["evidence"][0]["quote"] == "#!/usr/bin/env python3"
    assert first["evidence"][0]["grounded"] is True


def test_scripted_reviewer_good_port_passes(tmp_path: Path) -> None:
    verdicts = demo_verdicts(tmp_path, "good", GOOD)
    assert [verdicts[g.id] for g in DEMO_GATES] == ["pass"] * 5
    assert verdicts["gate"] == "pass"


def test_scripted_reviewer_catches_a_shim(tmp_path: Path) -> None:
    verdicts = demo_verdicts(tmp_path, "shim", SHIM)
    assert verdicts["no-python-sources"] == "fail"
    assert verdicts["no-interpreter-dependency"] == "fail"
    assert verdicts["node-is-primary"] == "fail"
    assert verdicts["no-embedded-reference"] == "fail"
    assert verdicts["node-present"] == "pass"
    check = next(
        c
        for c in verdicts["checks"]  # type: ignore[attr-defined]
        if c["gate"] == "no-interpreter-dependency"
    )
    assert check["evidence"][0]["path"] == "submission:lib/cli.js"
    assert check["evidence"][0]["quote"] == "const cp = require('child_process');"


def test_scripted_reviewer_catches_a_shell_wrapper_and_embedded_source(tmp_path: Path) -> None:
    wrapper = demo_verdicts(tmp_path / "w", "wrapper", WRAPPER)
    assert wrapper["node-is-primary"] == "fail" and wrapper["no-python-sources"] == "pass"
    embedded = demo_verdicts(tmp_path / "e", "embedded", EMBEDDED)
    assert embedded["no-embedded-reference"] == "fail"
    assert embedded["no-python-sources"] == "pass" and embedded["node-is-primary"] == "pass"


def test_scripted_reviewer_with_too_little_javascript(tmp_path: Path) -> None:
    thin = {"bin/csvtab": GOOD["bin/csvtab"], "lib/cli.js": "module.exports = {};\n"}
    verdicts = demo_verdicts(tmp_path, "thin", thin)
    assert verdicts["node-present"] == "fail"
    assert verdicts["no-python-sources"] == "pass"
