"""Issue 32, item 5: a Stage II module never hands root to the submission, and the suite it
grades with stays the suite.

demo03's ``build`` module runs ``sh build.sh PREFIX`` itself in ``$SRB_REPO`` (published
style, no launcher). ``wrongexit`` is the honest CMake port with one flaw (an unknown option
exits 1, State A exits 2): Stage II incomplete, score 0. ``hostile`` is the same tree whose
build.sh builds outside ``$SRB_REPO`` (nothing of uid 0 lands in the tree) and then appends
an always-pass ``check`` to the suite's ``lib/kit.py``: had it run as uid 0, as it did before
the module's exec boundary, the layout and run modules would pass everything (Stage II
complete, 40). Now the build runs as the slot uid, the write is refused, the attempt is in
the build check's record, and the tree ends exactly where ``wrongexit`` ends.

The second test holds the other half of the defence without a container: a module that
changes its suite's files (as submission code running as root could) is that module's
failure, recorded as tampering, and no later module runs on the changed suite.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from srb_tui.grader.suite.manifest import load_suite
from srb_tui.grader.suite.run import run_suite
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import load_task
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.sources import prepare_state_a
from srb_tui.store import Store

from ..conftest import BUILTIN_TASKS
from ..ladder.harness import BASE_IMAGE, Graded, Ladder

DEMO03 = BUILTIN_TASKS / "demo03-greet-make-to-cmake"
STAGES = ("audit", "behavioural")

TAMPER = r"""
# --- the attack: build outside $SRB_REPO, then make every later check pass
kit="${SRB_SUITE_DIR:-/tests/behavioural}/lib/kit.py"
if printf '%s\n' '' '_honest_check = check' '' \
    'def check(check_id, ok, summary):' \
    '    return _honest_check(check_id, True, summary)' >> "$kit" 2>/dev/null; then
  echo "srb-attack suite: append an always-pass check to $kit: SUCCEEDED"
else
  echo "srb-attack suite: append an always-pass check to $kit: refused"
fi
echo "srb-attack suite: built as uid $(id -u)"
"""


def wrong_exit(dest: Path) -> Path:
    """The honest reference port with one flaw: an unknown option exits 1 (State A: 2)."""
    shutil.copytree(DEMO03 / "submissions" / "reference", dest)
    main = dest / "src" / "main.c"
    text = main.read_text()
    assert text.count("return 2;") == 1
    main.write_text(text.replace("return 2;", "return 1;"))
    return dest


def hostile(dest: Path) -> Path:
    """``wrong_exit`` whose build.sh builds in a scratch folder and rewrites the suite."""
    wrong_exit(dest)
    script = dest / "build.sh"
    text = script.read_text().replace("-B _build", '-B "$out"').replace(
        "--build _build", '--build "$out"').replace("--install _build", '--install "$out"')
    text = text.replace("set -eu\n", 'set -eu\nout=$(mktemp -d)\n')
    script.write_text(text + TAMPER)
    return dest


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ladder03(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Ladder]:
    root = tmp_path_factory.mktemp("tamper03")
    load = load_task(DEMO03)
    assert load.task is not None and load.ok, load.problems
    state_a = prepare_state_a(DEMO03, load.task.state_a, root / "cache").tree
    engine = DockerEngine(RunnerPool(2))
    images = StageImages(engine, load.task, BASE_IMAGE, lambda event: None)
    for stage in STAGES:
        await images.get(stage)
    store = await Store.open(root / "srb.sqlite3")
    try:
        yield Ladder(engine, store, load.task, state_a, root)
    finally:
        await store.close()
        engine.close()


def rates(got: Graded) -> dict[str, float]:
    return {m["id"]: m["rate"] for m in got.envelope.behavioural["modules"]}


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_build_that_rewrites_the_suite_ends_where_the_honest_flaw_ends(
    ladder03: Ladder, tmp_path: Path
) -> None:
    honest = await ladder03.grade(wrong_exit(tmp_path / "wrongexit"), stages=STAGES)
    got = await ladder03.grade(hostile(tmp_path / "hostile"), stages=STAGES)
    for graded in (honest, got):
        env = graded.envelope
        assert env.valid and env.harness_error is None, env.to_json()
        assert env.audit_gate == "pass", env.to_json()
        assert env.score == 0.0 and env.blocked_by == "behavioural", env.to_json()
        assert env.behavioural["complete"] is False
    assert rates(got) == rates(honest) == {"build": 1.0, "layout": 1.0, "run": round(6 / 7, 6)}
    # the attempt is in the record: the build check keeps the build's output, refused
    build = [c for c in await ladder03.store.grading.checks(got.run_id, "behavioural")
             if c.check_id == "build-exits-0"]
    text = "\n".join(f"{c.summary or ''}\n{c.detail or ''}" for c in build)
    lines = [ln for ln in text.splitlines() if ln.startswith("srb-attack suite:")]
    assert any(ln.endswith(": refused") for ln in lines), text
    assert not any("SUCCEEDED" in ln for ln in lines), lines
    assert "srb-attack suite: built as uid 0" not in lines, lines
    run = await ladder03.store.runs.get_run(got.run_id)
    assert run is not None
    grading = run.extra["grading"]["behavioural"]
    assert not grading.get("boundary_given_up") and not grading.get("suite_tampering"), grading
    units = {u["id"]: u for u in got.envelope.behavioural["modules"]}
    assert units["build"].get("status") == "ok"


MODULE_OK = """import json, os
open(os.environ["SRB_RESULT"], "w").write(json.dumps({"checks": [
    {"id": "fine", "verdict": "pass"}]}))
"""
MODULE_TAMPERS = """import json, os
lib = os.path.join(os.environ["SRB_SUITE_DIR"], "lib", "kit.py")
open(lib, "a").write("ALWAYS_PASS = True\\n")
open(os.environ["SRB_RESULT"], "w").write(json.dumps({"checks": [
    {"id": "fine", "verdict": "pass"}]}))
"""


def test_a_changed_suite_fails_the_module_and_stops_the_suite(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    for name, body in (("build", MODULE_TAMPERS), ("run", MODULE_OK)):
        (suite_dir / "modules" / name).mkdir(parents=True)
        (suite_dir / "modules" / name / "run.py").write_text(body)
    (suite_dir / "lib").mkdir()
    (suite_dir / "lib" / "kit.py").write_text("KIT = 1\n")
    (suite_dir / "suite.toml").write_text(
        'schema = "swerefactor.behavioural-suite/1"\ntask = "t"\nlib_dir = "lib"\n'
        '[[module]]\nid = "build"\nweight = 1.0\n[[module]]\nid = "run"\nweight = 1.0\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    result = tmp_path / "result.json"
    doc = run_suite(load_suite(suite_dir), repo=repo, original=None, result_path=result,
                    work_root=tmp_path / "work", private_root=tmp_path / "private")
    units = {u["id"]: u for u in doc["units"]}
    assert units["build"]["status"] == "error" and units["build"]["rate"] == 0.0, units
    assert units["build"]["tampering"] == ["lib/kit.py changed"], units["build"]
    assert units["build"]["message"].startswith("tampering:")
    assert units["run"]["status"] == "unreached" and "changed the suite" in \
        units["run"]["message"], units["run"]
    assert doc["metadata"]["complete"] is False
    assert json.loads(result.read_text())["units"][0]["tampering"]
