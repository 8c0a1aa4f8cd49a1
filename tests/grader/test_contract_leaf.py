"""The contract leaf (``srb_tui/grader/contract.py``) is the one home of the rules the host
and the grader share: a copy of one of them written out anywhere else in ``srb_tui`` fails
here (issue 34 item 2). What is checked, by reading every module's syntax tree:

* a tuple, list or set literal of exactly the three stage names or the four module
  statuses (a run-status list that includes the stages is another rule);
* a tuple, list or set literal of three or more module-contract environment names (the
  list itself; setting one name in an environment is a use);
* a string literal naming a file schema;
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
EXEMPT = (PACKAGE / "grader" / "runtime", PACKAGE / "authoring" / "templates")
ENV = {*contract.MODULE_CONTRACT_ENV, *contract.MODULE_DEADLINE_ENV, *contract.SRB_RUNNER_ENV}
SCHEMAS = {contract.SUITE_SCHEMA, contract.SCAN_SCHEMA, contract.PROBE_SCHEMA,
           contract.EVALUATION_SCHEMA, contract.STAGE_RESULT_SCHEMA, contract.SCORE_SCHEMA,
           contract.TELEMETRY_SCHEMA}
SETS = {"stage names": set(contract.STAGES), "module statuses": set(contract.MODULE_STATUSES)}


def _modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py"))
            if p != LEAF and not any(p.is_relative_to(e) for e in EXEMPT)]


def _copies(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)  # type: ignore[attr-defined]
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            texts = {e.value for e in node.elts
                     if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            for what, wanted in SETS.items():
                if texts == wanted:
                    found.append(f"{path.name}:{node.lineno}: the {what} written out")
            if len(texts & ENV) >= 3:
                found.append(f"{path.name}:{node.lineno}: the module-contract names")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and node.value in SCHEMAS and id(node) not in docstrings):
            found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    found.sort(key=lambda text: int(text.split(":")[1]))
    return found


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


def test_the_leaf_imports_nothing() -> None:
    tree = ast.parse(LEAF.read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert [getattr(n, "module", None) for n in imports] == ["__future__"]


def test_one_module_timeout_on_both_sides(tmp_path: Path) -> None:
    """suite.toml without timeouts: the host's validator and the grader's reader agree on
    the published default (900 s; the grader read 3600 s before the leaf)."""
    import tomllib

    from srb_tui.grader.manifests.suite import parse_suite
    from srb_tui.grader.suite_manifest import load_suite
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
