"""suite.toml, scan.toml and probe.toml each have one reader (``srb_tui/grader/manifests``),
standard library only and shipped with the grader: the host's task loader and the grader in
a stage container read a file by the same rules and report it in the same sentences (the
host adds file and line). Where srb's two suite readers once disagreed, the published
reader decided; these tests pin those choices."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import pytest

from srb_tui.grader import contract
from srb_tui.grader.manifests.probe import parse_probe
from srb_tui.grader.manifests.suite import parse_scan, parse_suite
from srb_tui.grader.manifests.table import Collected
from srb_tui.grader.suite.manifest import SuiteError, load_suite
from srb_tui.schema.problems import Problem
from srb_tui.schema.reader import Source

MANIFESTS = Path(contract.__file__).resolve().parent / "manifests"
HEADER = 'schema = "swerefactor.behavioural-suite/1"\ntask = "t1"\n'


def _both(tmp_path: Path, text: str) -> tuple[list[str], list[str]]:
    """The host's problems (without file and line) and the grader's, for one suite.toml."""
    problems: list[Problem] = []
    parse_suite(Source("tests/behavioural/suite.toml", text, problems), tomllib.loads(text), "t1")
    host = [f"{p.key}: {p.message}" for p in problems]
    (tmp_path / "suite.toml").write_text(text, encoding="utf-8")
    try:
        load_suite(tmp_path / "suite.toml")
    except SuiteError as err:
        return host, err.problems
    return host, []


def test_host_and_grader_report_a_bad_suite_in_the_same_words(tmp_path: Path) -> None:
    text = (HEADER + 'default_timeout_sec = "60"\nmodul = 1\n'
            '[[module]]\nid = "a"\nweight = true\ntimeout_sec = 0\nwieght = 2\n'
            '[env]\nX = false\n')
    host, grader = _both(tmp_path, text)
    assert host == grader
    assert host == [
        "modul: unknown key `modul`; did you mean `module`?",
        'default_timeout_sec: expected a number, found the string "60" (write 60 without quotes)',
        "env.X: expected a string, found the boolean false",
        "module[0].wieght: unknown key `wieght`; did you mean `weight`?",
        "module[0].weight: expected a number, found the boolean true (a boolean is not a number)",
        "module[0].timeout_sec: must be greater than 0 (found 0)",
    ]


def test_the_host_names_file_and_line(tmp_path: Path) -> None:
    text = HEADER + "[[module]]\nid = \"a\"\ntimeout_sec = -5\n"
    problems: list[Problem] = []
    parse_suite(Source("tests/behavioural/suite.toml", text, problems), tomllib.loads(text), "t1")
    assert [str(p) for p in problems] == [
        "tests/behavioural/suite.toml:5 [module[0].timeout_sec]: must be greater than 0 (found -5)"]


def test_where_the_two_readers_disagreed_the_published_reader_decides(tmp_path: Path) -> None:
    long_id = "m" * 80
    text = (HEADER + "[env]\nN = 3\n"
            f'[[module]]\nid = "{long_id}"\ntitle = 5\nabout = 7\ncommand = ["run", ""]\n'
            'dir = "modules/../m1"\n[module.metadata]\nowner = "x"\n')
    (tmp_path / "m1").mkdir()
    host, grader = _both(tmp_path, text)
    assert host == grader == []
    suite = load_suite(tmp_path / "suite.toml")
    module = suite.modules[0]
    assert (module.id, module.title, module.command) == (long_id, "5", ("run", ""))
    assert module.dir == (tmp_path / "m1").resolve() and suite.env == {"N": "3"}
    read = parse_suite(Collected(), tomllib.loads(text))
    assert read.modules[0].about == "7" and dict(read.modules[0].metadata) == {"owner": "x"}


def test_the_grader_still_refuses_a_folder_that_leaves_by_a_link(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "out").symlink_to(tmp_path)
    (tmp_path / "suite" / "suite.toml").write_text(
        HEADER + '[[module]]\nid = "a"\ndir = "out"\n', encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "suite")
    assert caught.value.problems == ["module[0].dir: `out` leaves the suite folder"]


def test_a_scan_reads_by_the_same_rules_and_gets_srb_scan(tmp_path: Path) -> None:
    text = HEADER.replace("behavioural-suite", "scan-suite") + '[[module]]\nid = "a"\n'
    (tmp_path / "suite.toml").write_text(text, encoding="utf-8")
    assert load_suite(tmp_path, scan=True).env == {"SRB_SCAN": "1"}
    assert parse_scan(Collected(), tomllib.loads(text)).modules[0].timeout_sec == 900.0
    with pytest.raises(SuiteError, match=r"schema: expected `swerefactor\.behavioural-suite/1`"):
        load_suite(tmp_path)


def test_a_probe_defaults_come_from_the_contract() -> None:
    text = ('schema = "swerefactor.verification-probe/1"\ntask = "t1"\nprompt = "p.txt"\n'
            'candidate_command = ["bash", "run.sh"]\n[scope]\n'
            '[[adversary]]\nid = "a1"\nmodel = "m"\ndriver = "fuzz"\n')
    collected = Collected()
    probe = parse_probe(collected, tomllib.loads(text))
    assert collected.problems == []
    assert probe.scope.fault_exit_codes == contract.DEFAULT_FAULT_EXIT_CODES == tuple(range(64, 79))
    assert probe.adversaries[0].budget_sec == contract.DEFAULT_ADVERSARY_BUDGET_SEC


def test_the_manifests_import_only_the_standard_library_and_each_other() -> None:
    """They are shipped into stage containers inside the grader (as ``srb_grader``), so
    they import relatively and nothing outside the standard library."""
    for path in sorted(MANIFESTS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            outside = [n for n in names
                       if n.split(".")[0] not in sys.stdlib_module_names | {"__future__"}]
            assert not outside, (path.name, outside)
