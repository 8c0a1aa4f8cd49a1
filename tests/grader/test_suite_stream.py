"""Stage II's cheaper fixed cost per module (issue 38 item 2), held to what it must keep.

Each module's checks reach the grader's stdout as it ends (what the host writes to the store
while later modules run) and are exactly the stage result's; the grader reports where its
time went; the suite's digest taken after one module is the next module's "before", so a
change between two modules is still that next module's tampering; a module's end is seen
from its pidfd at once, and a module that outlives its budget still times out.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from srb_tui.grader.boundary.module_boundary import SuiteWatch
from srb_tui.grader.boundary.procs import wait_exit
from srb_tui.grader.envelope import StageEnvelope
from srb_tui.grader.suite.manifest import load_suite
from srb_tui.grader.suite.phases import PHASES
from srb_tui.grader.suite.run import run_module_encoded

from .helpers import make_suite, read_json, run_grader, write_tree

CHECKS_MARK = "@srb-checks "
PROGRESS_MARK = "@srb-progress "

THREE = ('echo \'{"checks": [{"id": "a", "verdict": "pass"}, {"id": "b", "verdict": "fail", '
         '"summary": "caf\\u00e9 \\ud800", "detail": "two\\nlines"}, '
         '{"id": "c", "verdict": "maybe"}]}\' > "$SRB_RESULT"\n')
ONE = "echo '[{\"id\": \"x\", \"verdict\": \"pass\", \"weight\": 0}]' > \"$SRB_RESULT\"\n"


def _suite(root: Path) -> Path:
    return make_suite(root, 'schema = "swerefactor.behavioural-suite/1"\ntask = "t"', {
        "first": ("weight = 1", "run.sh", THREE),
        "broken": ("weight = 1", "run.sh", "exit 3\n"),
        "last": ("weight = 2", "run.sh", ONE),
    })


def test_each_module_s_checks_are_streamed_before_its_end_and_equal_the_result(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path / "suite")
    result = tmp_path / "r.json"
    done = run_grader("suite", "--suite", str(suite), "--repo",
                      str(write_tree(tmp_path / "repo", {"f": "x"})), "--result", str(result),
                      "--work", str(tmp_path / "w"))
    assert done.returncode == 0, done.stderr
    data = read_json(result)
    streamed: dict[str, list[dict[str, object]]] = {}
    order: list[tuple[str, str]] = []
    for line in done.stdout.splitlines():
        if line.startswith(CHECKS_MARK):
            doc = json.loads(line[len(CHECKS_MARK):])
            assert set(doc) == {"module", "checks"}
            streamed[doc["module"]] = doc["checks"]
            order.append(("checks", doc["module"]))
        elif line.startswith(PROGRESS_MARK):
            doc = json.loads(line[len(PROGRESS_MARK):])
            order.append((doc["state"], doc["module"]))
    want: dict[str, list[dict[str, object]]] = {u["id"]: [] for u in data["units"]}
    for check in data["checks"]:
        want[check["module"]].append(check)
    assert streamed == want  # every module, the checkless one too, exactly as recorded
    assert streamed["first"][1]["summary"] == "caf\u00e9 \ud800"  # non-ASCII, lone surrogate
    assert streamed["first"][2]["verdict"] == "error"  # normalised, as in the result
    for module in want:  # the checks come between the module's start and its end line
        ended = next(i for i, (what, m) in enumerate(order)
                     if m == module and what not in ("running", "checks"))
        assert order[ended - 1] == ("checks", module), order


def test_the_result_says_where_the_grader_s_time_went(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    result = tmp_path / "r.json"
    done = run_grader("suite", "--suite", str(suite), "--repo",
                      str(write_tree(tmp_path / "repo", {"f": "x"})), "--repo-source",
                      str(write_tree(tmp_path / "source", {"f": "x"})),
                      "--result", str(result), "--work", str(tmp_path / "w"))
    assert done.returncode == 0, done.stderr
    data = read_json(result)
    phases = data["metadata"]["phases_sec"]
    assert list(phases) == [name for name in PHASES if name in phases]
    assert {"stage_submission", "checkpoint", "module_setup", "module_process",
            "module_end", "suite_digest", "result_read"} <= set(phases)
    assert all(sec >= 0 for sec in phases.values())
    ran = sum(u["duration_sec"] for u in data["units"])
    assert abs(phases["module_process"] - ran) < 0.05, (phases, ran)
    inside = sum(sec for name, sec in phases.items() if name != "stage_submission")
    assert inside <= data["duration_sec"] + 0.01, (phases, data["duration_sec"])


def test_a_change_between_two_modules_is_the_next_module_s_tampering(tmp_path: Path) -> None:
    suite_dir = make_suite(tmp_path / "suite", 'schema = "swerefactor.behavioural-suite/1"\n'
                           'task = "t"', {"a": ("weight = 1", "run.sh", ONE),
                                          "b": ("weight = 1", "run.sh", ONE)})
    (suite_dir / "data.txt").write_text("recorded\n")
    suite = load_suite(suite_dir)
    repo = write_tree(tmp_path / "repo", {"f": "x"})
    watch = SuiteWatch(suite.root)
    first, _, _ = run_module_encoded(suite, suite.modules[0], repo=repo, original=None,
                                      work_root=tmp_path / "w", watch=watch)
    assert first["status"] == "ok" and "tampering" not in first
    # between the two modules (only the grader runs here): a changed answer is not lost
    (suite_dir / "data.txt").write_text("forged\n")
    second, _, _ = run_module_encoded(suite, suite.modules[1], repo=repo, original=None,
                                       work_root=tmp_path / "w", watch=watch)
    assert second["status"] == "error" and second["tampering"] == ["data.txt changed"]


def test_envelope_add_checks_gives_the_batch_s_json_and_keeps_the_document(
    tmp_path: Path,
) -> None:
    envelope = StageEnvelope(stage="behavioural", task="t")
    envelope.write(tmp_path / "r.json", durable=False)
    assert read_json(tmp_path / "r.json")["checks"] == []
    envelope.checks.append({"module": "m0", "id": "direct", "verdict": "pass"})
    text = envelope.add_checks([{"module": "m1", "id": "a", "verdict": "pass"},
                                {"module": "m1", "id": "b", "verdict": "fail",
                                 "summary": "x\ny \ud800"}])
    assert json.loads(text) == envelope.checks[1:] and "\n" not in text
    envelope.write(tmp_path / "r.json", durable=False)
    assert read_json(tmp_path / "r.json")["checks"] == envelope.checks
    assert envelope.add_checks([]) == "[]"
    envelope.checks.append({"module": "m2", "id": "late", "verdict": "skip"})
    envelope.write(tmp_path / "r.json")
    written = (tmp_path / "r.json").read_text()
    assert read_json(tmp_path / "r.json")["checks"] == envelope.checks
    assert len(written.splitlines()) < 30  # a batch of checks on one line


def test_wait_exit_sees_the_end_and_keeps_the_budget() -> None:
    quick = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert wait_exit(quick, 30.0) is True
    assert quick.returncode == 3  # reaped
    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        began = time.monotonic()
        assert wait_exit(slow, 0.3) is False
        assert 0.3 <= time.monotonic() - began < 10
        assert slow.returncode is None
    finally:
        slow.kill()
        slow.wait()


class _Subclass(dict):  # type: ignore[type-arg]
    """A dict that is not exactly a dict: normalise_check's general path."""


def test_the_usual_check_s_short_path_normalises_as_the_general_one() -> None:
    from itertools import product

    from srb_tui.grader.suite.checks import normalise_check

    ids = [None, "", "a", 5, True]
    verdicts = [None, "pass", "fail", "skip", "error", "maybe", 1]
    weights = [None, 1.0, 0, 0.0, -1, 2, True, False, float("inf"), "1", 1.5]
    extras: list[dict[str, object]] = [{}, {"summary": "s"}, {"detail": "d", "evidence": [1]}]
    for check_id, verdict, weight, extra in product(ids, verdicts, weights, extras):
        raw = {k: v for k, v in (("id", check_id), ("verdict", verdict), ("weight", weight))
               if v is not None}
        raw.update(extra)
        short, general = normalise_check(raw, 3), normalise_check(_Subclass(raw), 3)
        assert list(short.items()) == list(general.items()), raw  # keys in the same order
