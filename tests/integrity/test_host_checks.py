"""What the host refuses to believe, and the work bounds of the reviewer tools (no Docker)."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest

from srb_tui.grader.audit.tools import Toolbox, ToolLimits
from srb_tui.grader.suite.manifest import load_suite
from srb_tui.grader.suite.run import run_suite
from srb_tui.runner.containers import ExecResult, interpret_exit
from srb_tui.schema import Module, Suite, load_task
from srb_tui.service.grading.stages.behavioural import outcome_of
from srb_tui.service.grading.stages.stage_layout import StageLayout, stage_mounts
from srb_tui.service.grading.stages.trust import UntrustedResult, verify_behavioural
from srb_tui.service.grading.stages.verification import RoundResult, flag_early_survival

from ..conftest import DEMO_TASK
from ..grader.helpers import make_suite

HEADER = 'schema = "swerefactor.behavioural-suite/1"\ntask = "t"\n'
PASS = 'import json, os\nopen(os.environ["SRB_RESULT"], "w").write(json.dumps({"checks": [{"id": "a", "verdict": "pass"}, {"id": "b", "verdict": "%s"}]}))\n'  # noqa: E501


def genuine(tmp_path: Path, second: str = "pass") -> tuple[dict[str, Any], Any]:
    """A real stage result from the grader's suite runner, and the schema's suite."""
    root = make_suite(
        tmp_path / "suite",
        HEADER,
        {
            "one": ('weight = 1.0\ncommand = ["python3", "run.py"]', "run.py", PASS % "pass"),
            "two": ('weight = 2.0\ncommand = ["python3", "run.py"]', "run.py", PASS % second),
        },
    )
    doc = run_suite(
        load_suite(root),
        repo=tmp_path,
        original=None,
        result_path=tmp_path / "result.json",
        work_root=tmp_path / "work",
    )
    declared = Suite(
        schema="swerefactor.behavioural-suite/1",
        task="t",
        modules=(
            Module(id="one", title="one", weight=1.0, dir="modules/one", timeout_sec=60),
            Module(id="two", title="two", weight=2.0, dir="modules/two", timeout_sec=60),
        ),
    )
    return doc, declared


def test_a_genuine_result_is_believed_and_recomputed(tmp_path: Path) -> None:
    doc, suite = genuine(tmp_path, second="fail")
    summary = verify_behavioural(doc, suite)
    assert summary["complete"] is False
    assert summary["rate"] == pytest.approx((1.0 * 1.0 + 2.0 * 0.5) / 3.0)
    doc_ok, suite_ok = genuine(tmp_path / "ok")
    assert verify_behavioural(doc_ok, suite_ok)["complete"] is True


@pytest.mark.parametrize(
    ("forge", "problem"),
    [
        (lambda d: d["units"].pop(), "has no result"),
        (lambda d: d["units"].append({**d["units"][0], "id": "extra"}), "not declared"),
        (lambda d: d["units"][1].update(passed=2, failed=0), "its checks say"),
        (lambda d: d["units"][1].update(rate=1.0), "rate"),
        (lambda d: d["units"][1].update(weight=0.0), "weight"),
        (lambda d: d["checks"].append({"module": "zzz", "id": "x", "verdict": "pass"}),
         "unknown module"),
        (lambda d: d["checks"][0].update(verdict="PASS"), "malformed"),
    ],
)
def test_a_forged_result_is_refused(tmp_path: Path, forge: Any, problem: str) -> None:
    doc, suite = genuine(tmp_path, second="fail")
    forged = copy.deepcopy(doc)
    forge(forged)
    with pytest.raises(UntrustedResult) as err:
        verify_behavioural(forged, suite)
    assert problem in str(err.value)


def test_completeness_never_comes_from_metadata(tmp_path: Path) -> None:
    doc, _ = genuine(tmp_path, second="fail")
    doc["metadata"]["complete"] = True  # the claim
    outcome = outcome_of(doc)
    assert outcome.status == "ok" and outcome.behavioural_complete is False


def test_the_demo_suite_is_what_the_host_checks_against() -> None:
    load = load_task(DEMO_TASK)
    assert load.task is not None and load.task.suite is not None
    assert [m.id for m in load.task.suite.modules] == ["formats", "unicode", "inputs", "options"]


# --------------------------------------------------------------------------- exit codes


def test_a_kill_is_not_a_timeout() -> None:
    killed = interpret_exit(ExecResult(137, b"", b""), timeout_sec=900, elapsed=1.0)
    assert not killed.timed_out and killed.signal == 9 and killed.signal_name == "SIGKILL"
    assert killed.describe() == "killed by SIGKILL (exit 137)"
    late = interpret_exit(ExecResult(137, b"", b""), timeout_sec=900, elapsed=905.0)
    assert late.timed_out and late.signal is None
    assert interpret_exit(ExecResult(124, b"", b""), timeout_sec=10, elapsed=10.2).timed_out
    term = interpret_exit(ExecResult(143, b"", b""), timeout_sec=None, elapsed=3.0)
    assert term.signal_name == "SIGTERM" and not term.timed_out
    assert interpret_exit(ExecResult(2, b"", b""), timeout_sec=5, elapsed=1).signal is None


# --------------------------------------------------------------------------- rounds


def test_a_survival_far_inside_its_budget_is_flagged() -> None:
    from srb_tui.schema import Adversary

    adversary = Adversary(id="a", model="m", driver="fuzz")
    early = RoundResult(adversary, "survived", "", "", duration_sec=3.0)
    flag_early_survival(early, 120.0)
    assert early.extra["early_survival"] is True and "stopped early" in early.notes[0]
    full = RoundResult(adversary, "survived", "", "", duration_sec=119.0)
    flag_early_survival(full, 120.0)
    assert "early_survival" not in full.extra and not full.notes
    broken = RoundResult(adversary, "broken", "", "", duration_sec=1.0)
    flag_early_survival(broken, 120.0)
    assert not broken.notes


# --------------------------------------------------------------------------- storage


def test_what_submission_code_may_write_is_sized_under_memory() -> None:
    mounts, fsize = stage_mounts(
        StageLayout(workspace=True), memory_mb=2048, storage_mb=4096, uid_base=61000
    )
    sizes = {k: int(v.split(",")[0][5:-1]) for k, v in mounts.items()}
    assert set(mounts) == {"/workspace", "/srb/run/0", "/tmp", "/srb/work"}
    assert sum(sizes.values()) <= 1024 and fsize == max(sizes.values()) * 1024**2
    assert "uid=61000" in mounts["/workspace"] and "mode=0700" in mounts["/srb/run/0"]
    three, _ = stage_mounts(StageLayout(slots=6, shared_tmp=False, private_tests=False), 2048, 4096)
    slots = sorted(k for k in three if k.startswith("/srb/run"))
    assert slots == [f"/srb/run/{n}" for n in range(6)]
    assert "mode=0755" in three["/tmp"] and "/workspace" not in three


# --------------------------------------------------------------------------- reviewer tools


def test_search_over_a_long_line_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    sub = tmp_path / "b"
    sub.mkdir()
    (sub / "notes.txt").write_text("#!" * 950_000 + "\n")
    (sub / "x.js").write_text("const a = 1;\n" + " " * 500_000 + "spawn_python_here\n")
    box = Toolbox(tmp_path / "a", sub, limits=ToolLimits(call_timeout_sec=3.0))
    started = time.monotonic()
    out = box.call("search", {"pattern": r"#!.*python", "root": "submission"})
    assert time.monotonic() - started < 12.0
    assert out["ok"] is True
    found = box.call("search", {"pattern": "spawn_python", "root": "submission"})
    hits = found["result"]["matches"]
    assert hits and hits[0]["path"] == "submission:x.js" and hits[0]["line"] == 2
    assert "spawn_python_here" in hits[0]["text"] and len(hits[0]["text"]) <= 401


def test_a_pathological_pattern_is_stopped_by_the_wall_clock(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    sub = tmp_path / "b"
    sub.mkdir()
    (sub / "t.txt").write_text("a" * 1000 + "!\n")
    box = Toolbox(tmp_path / "a", sub, limits=ToolLimits(call_timeout_sec=1.0))
    started = time.monotonic()
    out = box.call("search", {"pattern": r"(a+)+$", "root": "submission"})
    assert time.monotonic() - started < 10.0
    assert out["ok"] is True and out["result"]["truncated"] and out["result"]["timed_out"]


def test_big_files_are_skipped_and_said_so(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    sub = tmp_path / "b"
    sub.mkdir()
    (sub / "big.txt").write_text("x\n" * 20_000)
    (sub / "big2.txt").write_text("x\n" * 20_000)
    limits = ToolLimits(search_max_file_bytes=1000, diff_max_file_bytes=1000)
    box = Toolbox(tmp_path / "a", sub, limits=limits)
    out = box.call("search", {"pattern": "x", "root": "submission"})
    assert out["result"]["skipped_large"] == ["submission:big.txt", "submission:big2.txt"]
    (tmp_path / "a" / "big.txt").write_text("y\n" * 20_000)
    diff = box.call("diff", {"path": "big.txt"})
    assert diff["result"]["status"] == "too_large"


# --------------------------------------------------------------------------- fuzz entry


def test_fuzz_entry_is_resolved_one_way_in_both_places() -> None:
    from srb_tui.grader.fuzzing.argv import HarnessFault, candidate_script, entry_in_tree
    from srb_tui.grader.fuzzing.observed import Observation

    assert entry_in_tree("bin/csvtab") == "bin/csvtab"
    assert entry_in_tree("/workspace/repo/bin/csvtab") == "bin/csvtab"
    for bad in ("/usr/bin/node", "../x", ""):
        with pytest.raises(HarnessFault):
            entry_in_tree(bad)
    script = candidate_script(
        adversary="a", seed=1, entry=entry_in_tree("/workspace/repo/bin/csvtab"), argv=[],
        data=b"x", original_len=1, expected=Observation(0, b"", b"", False, 0.0),
    )
    assert '"$SRB_TARGET/bin/csvtab"' in script and "$SRB_TARGET//" not in script


def test_the_launcher_never_runs_submission_code_as_root_outside_a_stage(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from srb_tui.grader.boundary.launch import main as launch

    monkeypatch.delenv("SRB_SANDBOX", raising=False)
    code = launch(["--", "true"])
    if os.geteuid() == 0:
        assert code == 125 and "refusing to run submission code as root" in capsys.readouterr().err
    else:  # a developer's host: no identity to switch to, the program runs as the caller
        assert code == 0


def test_submission_env_drops_every_contract_name() -> None:
    from srb_tui.grader.boundary.sandbox import submission_env

    env = submission_env(
        {"SRB_RESULT": "/r", "SRB_LEDGER": "/l", "PATH": "/opt/srb/python/bin:/usr/bin", "X": "1"},
        home="/h", tmpdir="/t", extra={"LC_ALL": "C.UTF-8"},
    )
    assert env == {"PATH": "/usr/bin", "X": "1", "HOME": "/h", "TMPDIR": "/t",
                   "PYTHONNOUSERSITE": "1", "LC_ALL": "C.UTF-8"}
