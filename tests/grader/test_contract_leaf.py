"""The contract leaf (``srb_tui/grader/contract.py``) is the one home of the rules the host
and the grader share: a copy of one of them written out anywhere else in ``srb_tui`` fails
here (issue 34 item 2). What is checked, by reading every module's syntax tree:

* a tuple, list or set literal of exactly the three stage names or the four module
  statuses (a run-status list that includes the stages is another rule);
* a tuple, list or set literal of three or more module-contract environment names (the
  list itself; setting one name in an environment is a use);
* a string literal naming a file schema;
* a second reader of suite.toml, scan.toml or probe.toml: one of their keys that only such a
  reader spells (``default_timeout_sec``, ``fault_exit_codes`` ...) written outside the one
  reader (``srb_tui/grader/manifests/``), or a module that loads TOML, names one of these
  files and does not hand what it read to the one reader (``parse_suite``/``parse_scan``/
  ``parse_probe``);
* an exit code of the contract written as a number: 124..127 or 137 anywhere, a literal in
  ``sys.exit``/``os._exit``/``SystemExit``, a literal compared with an ``exit_code`` or a
  ``returncode`` (0 aside), and a literal ``return`` from a command module (the CLI's
  handlers use ``srb_tui/commands/exit_codes.py``, the grader's commands the leaf);
* the leaf imports nothing (it is copied into stage containers with the grader).
"""

from __future__ import annotations

import ast
from pathlib import Path

from srb_tui.grader import contract

PACKAGE = Path(contract.__file__).resolve().parents[1]
LEAF = Path(contract.__file__).resolve()
# Stand-alone by design, loaded outside srb_tui: the published runtime srb ships for tasks'
# own lib/ (``import swerefactor.contract``), and the helpers ``srb tasks new`` writes into
# a task (a task directory runs without srb).
# The Stage III client lane's scripts are copied into the agent container on their own.
EXEMPT = (PACKAGE / "grader" / "runtime", PACKAGE / "authoring" / "templates",
          PACKAGE / "service" / "grading" / "stages" / "lane_files")
MANIFESTS = PACKAGE / "grader" / "manifests"
# Keys only a reader of suite.toml/scan.toml/probe.toml spells (``timeout_sec`` or ``id``
# are every manifest's words, so they are not evidence).
MANIFEST_KEYS = {"default_timeout_sec", "lib_dir", "fault_exit_codes", "require_deterministic",
                 "deny_commands", "network_allowed"}
MANIFEST_FILES = ("suite.toml", "scan.toml", "probe.toml")
ONE_READER = {"parse_suite", "parse_scan", "parse_probe"}
EXIT_NUMBERS = {contract.EXIT_TIMEOUT, contract.EXIT_LAUNCH_FAILED, contract.EXIT_CANNOT_EXECUTE,
                contract.EXIT_NOT_FOUND, contract.EXIT_KILLED}
# Modules whose functions' int returns are exit statuses.
COMMAND_MODULES = (PACKAGE / "cli.py", PACKAGE / "commands", PACKAGE / "grader" / "cli.py",
                   PACKAGE / "grader" / "launch.py")
ENV = {*contract.MODULE_CONTRACT_ENV, *contract.MODULE_DEADLINE_ENV, *contract.SRB_RUNNER_ENV}
SCHEMAS = {contract.SUITE_SCHEMA, contract.SCAN_SCHEMA, contract.PROBE_SCHEMA,
           contract.EVALUATION_SCHEMA, contract.STAGE_RESULT_SCHEMA, contract.SCORE_SCHEMA,
           contract.TELEMETRY_SCHEMA}
SETS = {"stage names": set(contract.STAGES), "module statuses": set(contract.MODULE_STATUSES)}


def _modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py"))
            if p != LEAF and not any(p.is_relative_to(e) for e in EXEMPT)]


def _is_int(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, int)
            and not isinstance(node.value, bool))


def _called(node: ast.Call) -> str:
    return ast.unparse(node.func)


def _exit_copies(tree: ast.AST, source: str, command_module: bool) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        # Written in decimal: 0x7E is a byte, not an exit status.
        if (_is_int(node) and node.value in EXIT_NUMBERS  # type: ignore[attr-defined]
                and (ast.get_source_segment(source, node) or "").isdecimal()):
            found.append((node.lineno, f"exit code {node.value} as a number"))  # type: ignore[attr-defined]
        elif (isinstance(node, ast.Call) and node.args and _is_int(node.args[0])
              and node.args[0].value != 0  # type: ignore[attr-defined]
              and _called(node) in {"sys.exit", "os._exit", "SystemExit", "exit"}):
            found.append((node.lineno, f"{_called(node)}() of a literal"))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = any(isinstance(side, ast.Attribute) and side.attr in {"exit_code", "returncode"}
                        for side in sides)
            literal = [side for side in sides if _is_int(side) and side.value != 0]  # type: ignore[attr-defined]
            if named and literal:
                found.append((node.lineno, "an exit code compared with a literal"))
        elif command_module and isinstance(node, ast.Return) and node.value is not None and (
                _is_int(node.value) or (isinstance(node.value, ast.IfExp) and (
                    _is_int(node.value.body) or _is_int(node.value.orelse)))):
            found.append((node.lineno, "a command returns a literal exit code"))
    return found


def _manifest_copies(tree: ast.AST, texts: list[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    loads_toml = names_file = hands_over = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = _called(node)
            loads_toml |= called in {"tomllib.load", "tomllib.loads"}
            hands_over |= called.split(".")[-1] in ONE_READER
    for text in texts:
        names_file |= text.endswith(MANIFEST_FILES)
    if loads_toml and names_file and not hands_over:
        found.append((1, "reads suite.toml/scan.toml/probe.toml with its own rules"))
    return found


def _copies(path: Path, *, command_module: bool | None = None) -> list[str]:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)  # type: ignore[attr-defined]
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    found: list[tuple[int, str]] = []
    texts: list[str] = []
    in_manifests = path.is_relative_to(MANIFESTS)
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            names = {e.value for e in node.elts
                     if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            for what, wanted in SETS.items():
                if names == wanted:
                    found.append((node.lineno, f"the {what} written out"))
            if len(names & ENV) >= 3:
                found.append((node.lineno, "the module-contract names"))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings):
            texts.append(node.value)
            if node.value in SCHEMAS:
                found.append((node.lineno, repr(node.value)))
            elif node.value in MANIFEST_KEYS and not in_manifests:
                found.append((node.lineno, f"the manifest key {node.value!r} read here"))
    if command_module is None:
        command_module = any(path == c or path.is_relative_to(c) for c in COMMAND_MODULES)
    found += _exit_copies(tree, source, command_module)
    if not in_manifests:
        found += _manifest_copies(tree, texts)
    return [f"{path.name}:{line}: {what}" for line, what in sorted(found)]


def test_no_rule_of_the_leaf_is_written_out_elsewhere() -> None:
    copies = [c for path in _modules() for c in _copies(path)]
    assert not copies, "use srb_tui.grader.contract instead:\n" + "\n".join(copies)


def test_the_guard_sees_a_copy(tmp_path: Path) -> None:
    """The scan is not blind: a module with copies is reported."""
    sample = tmp_path / "sample.py"
    sample.write_text('A = ("verification", "audit", "behavioural")\n'
                      'B = {"ok", "error", "timeout", "unreached"}\n'
                      'C = ["SRB_WORK", "SRB_REPO", "SRB_RESULT"]\n'
                      'D = "swerefactor.score/1"\n'
                      'E = ("pending", "audit", "behavioural", "verification")\n',
                      encoding="utf-8")
    assert [c.split(": ", 1)[1] for c in _copies(sample)] == [
        "the stage names written out", "the module statuses written out",
        "the module-contract names", "'swerefactor.score/1'"]


def test_the_guard_sees_a_second_manifest_reader(tmp_path: Path) -> None:
    """A module reading suite.toml by rules of its own is reported; one that loads the file
    and hands it to the one reader is not."""
    own = tmp_path / "own.py"
    own.write_text('import tomllib\n'
                   'DOC = tomllib.loads(open("tests/behavioural/suite.toml").read())\n'
                   'TIMEOUT = DOC.get("default_timeout_sec", 3600)\n', encoding="utf-8")
    assert [c.split(": ", 1)[1] for c in _copies(own)] == [
        "reads suite.toml/scan.toml/probe.toml with its own rules",
        "the manifest key 'default_timeout_sec' read here"]
    handed = tmp_path / "handed.py"
    handed.write_text('import tomllib\n'
                      'from srb_tui.grader.manifests.suite import parse_suite\n'
                      'DOC = tomllib.loads(open("tests/behavioural/suite.toml").read())\n'
                      'SUITE = parse_suite(REPORTER, DOC)\n', encoding="utf-8")
    assert _copies(handed) == []


def test_the_guard_sees_a_copied_exit_code(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('import sys\n'
                      'def main(res):\n'
                      '    if res.exit_code == 2:\n'
                      '        sys.exit(3)\n'
                      '    if res.returncode in (0, 124):\n'
                      '        return 0\n'
                      '    return 1 if res.exit_code else 0x7E\n', encoding="utf-8")
    assert [c.split(": ", 1)[1] for c in _copies(sample)] == [
        "an exit code compared with a literal", "sys.exit() of a literal",
        "exit code 124 as a number"]
    assert [c.split(": ", 1)[1] for c in _copies(sample, command_module=True)] == [
        "an exit code compared with a literal", "sys.exit() of a literal",
        "exit code 124 as a number", "a command returns a literal exit code",
        "a command returns a literal exit code"]


def test_the_leaf_imports_nothing() -> None:
    tree = ast.parse(LEAF.read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert [getattr(n, "module", None) for n in imports] == ["__future__"]


def test_one_module_timeout_on_both_sides(tmp_path: Path) -> None:
    """suite.toml without timeouts: the host's validator and the grader's reader agree on
    the published default (900 s; the grader read 3600 s before the leaf)."""
    import tomllib

    from srb_tui.grader.manifests.suite import parse_suite
    from srb_tui.grader.suite.manifest import load_suite
    from srb_tui.schema.reader import Source

    text = ('schema = "swerefactor.behavioural-suite/1"\ntask = "t1"\n'
            '[[module]]\nid = "m1"\n')
    suite_dir = tmp_path / "behavioural"
    (suite_dir / "modules" / "m1").mkdir(parents=True)
    (suite_dir / "suite.toml").write_text(text, encoding="utf-8")
    grader_side = load_suite(suite_dir / "suite.toml")
    problems: list[object] = []
    host_side = parse_suite(Source("tests/behavioural/suite.toml", text, problems),  # type: ignore[arg-type]
                            tomllib.loads(text), "t1")
    assert not problems
    assert grader_side.modules[0].timeout_sec == contract.DEFAULT_MODULE_TIMEOUT_SEC == 900.0
    assert host_side.modules[0].timeout_sec == 900.0


def test_model_families_read_one_way() -> None:
    assert contract.model_family("claude-opus-5") == "anthropic"
    assert contract.model_family("anthropic/claude-sonnet-5") == "anthropic"
    assert contract.model_family("gpt-5.6-sol") == "openai"
    assert contract.model_family("fuzz") is None
    assert contract.model_family("kimi-k3") == "kimi"


def test_the_runtime_for_tasks_keeps_the_same_names() -> None:
    """The ``swerefactor.contract`` srb gives a task's lib/ is stand-alone (it is imported
    outside srb_tui), so it keeps its own copy of the eight names: the same ones."""
    from srb_tui.grader.runtime.swerefactor.contract import CONTRACT_ENV

    assert set(CONTRACT_ENV) == set(contract.MODULE_CONTRACT_ENV)
