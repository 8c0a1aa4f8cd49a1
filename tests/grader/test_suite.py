"""Stage II runner against hostile modules: every status and message, exactly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from srb_tui.grader.suite.checks import module_rate, normalise_check, summarise, tally
from srb_tui.grader.suite.manifest import SuiteError, load_suite

from .helpers import (
    grader_cmd,
    kill_group_if_alive,
    make_suite,
    process_gone,
    read_json,
    run_grader,
    wait_for,
    write_tree,
)

HEADER = """
schema = "swerefactor.behavioural-suite/1"
task = "hostile"
lib_dir = "lib"
default_timeout_sec = 20

[env]
SUITE_LEVEL = "from-suite"
SHARED = "suite"
"""

PASS2 = '{"checks": [{"id": "a", "verdict": "pass"}, {"id": "b", "verdict": "pass"}]}'

ENV_PROBE = r"""
import json, os, sys
names = ["SRB_REPO", "SRB_ORIGINAL", "SRB_MODULE_DIR", "SRB_MODULE_ID", "SRB_SUITE_DIR",
         "SRB_WORK", "SRB_SUITE_WORK", "SRB_RESULT", "SRB_MODULE_TIMEOUT_SEC",
         "SRB_MODULE_DEADLINE", "PYTHONHASHSEED", "TZ", "LC_ALL", "SUITE_LEVEL", "SHARED",
         "MODULE_LEVEL", "SRB_STALE"]
meta = {name: os.environ.get(name) for name in names}
meta["cwd"] = os.getcwd()
meta["executable"] = sys.executable
meta["pgid_is_self"] = os.getpgid(0) == os.getpid()
with open(os.environ["SRB_RESULT"], "w") as fh:
    json.dump({"checks": [{"id": "env", "verdict": "pass"}], "metadata": meta,
               "notes": ["probe ran"]}, fh)
"""

MODULES: dict[str, tuple[str, str, str]] = {
    "env": ('weight = 1\n[module.env]\nMODULE_LEVEL = "m"\nSHARED = "module"', "run.py", ENV_PROBE),
    "hang": (
        "weight = 1\ntimeout_sec = 1",
        "run.sh",
        f"echo '{PASS2}' > \"$SRB_RESULT\"\nsleep 60\n",
    ),
    "stubborn": (
        "weight = 1\ntimeout_sec = 1",
        "run.sh",
        "trap '' TERM\necho $$ > \"$SRB_WORK/pid\"\nwhile true; do sleep 0.1; done\n",
    ),
    "badjson": ("weight = 1", "run.sh", 'printf \'{"checks": [\' > "$SRB_RESULT"\n'),
    "nothing": ("weight = 1", "run.sh", "echo working\nexit 3\n"),
    "silent0": ("weight = 1", "run.sh", "exit 0\n"),
    "oom": (
        "weight = 1",
        "run.sh",
        f"echo '{PASS2}' > \"$SRB_RESULT\"\nkill -9 $$\n",
    ),
    "background": (
        "weight = 1",
        "run.sh",
        'sleep 300 &\necho $! > "$SRB_WORK/child.pid"\n'
        'echo \'[{"id": "x", "verdict": "pass"}]\' > "$SRB_RESULT"\nexit 7\n',
    ),
    "barelist": (
        "weight = 2",
        "run.sh",
        'echo \'[{"id": "p", "verdict": "pass"}, {"id": "s", "verdict": "skip"},'
        ' {"id": "f", "verdict": "fail"}]\' > "$SRB_RESULT"\n',
    ),
    "unknown": (
        "weight = 1",
        "run.sh",
        'echo \'{"checks": [{"id": "u", "verdict": "maybe"}, '
        '{"id": "ok", "verdict": "pass"}]}\' > "$SRB_RESULT"\n',
    ),
    "observe": (
        "weight = 1",
        "run.sh",
        'echo \'{"checks": [{"id": "real", "verdict": "pass"}, '
        '{"id": "info", "verdict": "fail", "weight": 0}]}\' > "$SRB_RESULT"\n',
    ),
    "nostart": ('weight = 1\ncommand = ["/nonexistent/interpreter", "x"]', "", ""),
    "empty": ("weight = 0", "run.sh", "echo '[]' > \"$SRB_RESULT\"\n"),
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("hostile")
    suite = make_suite(base / "suite", HEADER, MODULES)
    repo = write_tree(base / "repo", {"README": "submission\n"})
    original = write_tree(base / "original", {"README": "state a\n"})
    result = base / "out" / "behavioural.json"
    env = {**os.environ, "SRB_STALE": "leaked"}
    done = run_grader(
        "suite",
        "--suite",
        str(suite),
        "--repo",
        str(repo),
        "--original",
        str(original),
        "--result",
        str(result),
        "--work",
        str(base / "work"),
        "--grace",
        "1",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    data = read_json(result)
    return {
        "data": data,
        "units": {unit["id"]: unit for unit in data["units"]},
        "suite": suite,
        "repo": repo,
        "original": original,
        "work": base / "work",
    }


def test_envelope_shape_and_final_status(hostile: dict[str, Any]) -> None:
    data = hostile["data"]
    assert data["schema"] == "swerefactor.stage-result/1"
    assert data["stage"] == "behavioural" and data["task"] == "hostile"
    assert data["status"] == "ok"
    assert len(data["harness"]["fingerprint"]) == 12
    assert [unit["id"] for unit in data["units"]] == list(MODULES)
    assert data["metadata"]["complete"] is False
    assert data["metadata"]["modules_unreached"] == 0


def test_module_environment_contract(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["env"]
    assert unit["status"] == "ok" and unit["rate"] == 1.0
    meta = unit["metadata"]
    suite: Path = hostile["suite"].resolve()
    work: Path = hostile["work"].resolve()
    assert meta["SRB_REPO"] == str(hostile["repo"].resolve())
    assert meta["SRB_ORIGINAL"] == str(hostile["original"].resolve())
    assert meta["SRB_MODULE_DIR"] == str(suite / "modules" / "env") == meta["cwd"]
    assert meta["SRB_MODULE_ID"] == "env"
    assert meta["SRB_SUITE_DIR"] == str(suite)
    assert meta["SRB_WORK"] == str(work / "modules" / "env")
    assert meta["SRB_SUITE_WORK"] == str(work / "suite")
    assert meta["SRB_RESULT"] == str(work / "results" / "env.json")
    assert meta["SRB_MODULE_TIMEOUT_SEC"] == "20"
    assert float(meta["SRB_MODULE_DEADLINE"]) > 1.6e9
    assert (meta["PYTHONHASHSEED"], meta["TZ"], meta["LC_ALL"]) == ("0", "UTC", "C.UTF-8")
    assert meta["SUITE_LEVEL"] == "from-suite" and meta["MODULE_LEVEL"] == "m"
    assert meta["SHARED"] == "module"
    assert meta["SRB_STALE"] is None, "inherited SRB_* names must not leak into a module"
    assert meta["executable"] == sys.executable, "run.py runs with the grader's interpreter"
    assert meta["pgid_is_self"] is True, "each module leads its own process group"
    assert unit["notes"] == ["probe ran"]


def test_hang_times_out_and_keeps_recorded_checks(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["hang"]
    assert unit["status"] == "timeout"
    assert unit["message"] == "timed out; 2 recorded checks kept"
    assert (unit["passed"], unit["scored"], unit["rate"]) == (2, 2, 0.0)
    kept = [c for c in hostile["data"]["checks"] if c["module"] == "hang"]
    assert [c["id"] for c in kept] == ["a", "b"]
    assert unit["reaped"] == "term"


def test_term_ignoring_module_is_killed(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["stubborn"]
    assert unit["status"] == "timeout"
    assert unit["reaped"] == "kill"
    assert unit["message"].startswith("timed out; 0 recorded checks kept (no result written")
    pid = int((hostile["work"] / "modules" / "stubborn" / "pid").read_text())
    assert process_gone(pid)


def test_invalid_json(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["badjson"]
    assert unit["status"] == "error"
    assert unit["message"].startswith("result is not valid JSON: ")
    assert unit["rate"] == 0.0 and unit["weight"] == 1.0


def test_nothing_written_with_failure_exit(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["nothing"]
    assert unit["status"] == "error"
    assert unit["message"] == "exited 3 and no result written to $SRB_RESULT"
    assert unit["exit_code"] == 3


def test_exit_zero_without_result(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["silent0"]
    assert unit["status"] == "error"
    assert unit["message"] == "exited 0 but no result written to $SRB_RESULT"


def test_killed_by_sigkill_is_an_error_even_with_a_result(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["oom"]
    assert unit["status"] == "error"
    assert unit["message"] == "killed by SIGKILL (out of memory?)"
    assert unit["signal"] == "SIGKILL" and unit["rate"] == 0.0
    assert unit["passed"] == 2, "what it recorded before dying stays on the record"


def test_background_child_is_reaped_and_exit_code_is_advisory(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["background"]
    assert unit["status"] == "ok" and unit["exit_code"] == 7 and unit["rate"] == 1.0
    assert unit["reaped"] == "term"
    child = int((hostile["work"] / "modules" / "background" / "child.pid").read_text())
    assert process_gone(child)


def test_bare_list_result_and_skip_in_denominator(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["barelist"]
    assert unit["status"] == "ok"
    assert (unit["passed"], unit["skipped"], unit["failed"], unit["scored"]) == (1, 1, 1, 3)
    assert unit["rate"] == pytest.approx(1 / 3, abs=1e-6)


def test_unknown_verdict_becomes_error(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["unknown"]
    assert (unit["errored"], unit["passed"], unit["rate"]) == (1, 1, 0.5)
    check = next(c for c in hostile["data"]["checks"] if c["id"] == "u")
    assert check["verdict"] == "error" and check["reported_verdict"] == "maybe"
    assert check["summary"] == "unknown verdict 'maybe'"


def test_unscored_observation_does_not_count(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["observe"]
    assert (unit["scored"], unit["observations"], unit["rate"]) == (1, 1, 1.0)
    info = next(c for c in hostile["data"]["checks"] if c["id"] == "info")
    assert info["scored"] is False and info["verdict"] == "fail"


def test_start_failure(hostile: dict[str, Any]) -> None:
    unit = hostile["units"]["nostart"]
    assert unit["status"] == "error"
    assert unit["message"].startswith("could not start: ")
    assert "/nonexistent/interpreter" in unit["message"]


def test_weight_zero_module_does_not_block_completeness() -> None:
    units = [
        {"weight": 1.0, "status": "ok", "rate": 1.0, "passed": 3, "scored": 3},
        {"weight": 0.0, "status": "error", "rate": 0.0, "passed": 0, "scored": 0},
    ]
    assert summarise(units)["complete"] is True
    units[0]["passed"] = 2
    assert summarise(units)["complete"] is False


def test_empty_pool_scores_zero_and_is_not_complete() -> None:
    counts = tally([normalise_check({"id": "o", "verdict": "pass", "weight": 0}, 0)])
    assert counts["scored"] == 0 and module_rate("ok", counts) == 0.0
    units = [{"weight": 1.0, "status": "ok", "rate": 0.0, "passed": 0, "scored": 0}]
    assert summarise(units)["complete"] is False


def test_malformed_checks_become_errors() -> None:
    assert normalise_check("text", 4) == {
        "id": "#4",
        "verdict": "error",
        "weight": 1.0,
        "scored": True,
        "summary": "check #4 is not an object",
    }
    missing = normalise_check({"verdict": "pass"}, 2)
    assert missing["id"] == "#2" and missing["verdict"] == "error"
    bad_weight = normalise_check({"id": "w", "verdict": "pass", "weight": "heavy"}, 0)
    assert bad_weight["verdict"] == "error" and bad_weight["summary"].startswith("weight ")


def test_complete_suite_against_state_a(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path / "suite",
        'schema = "swerefactor.behavioural-suite/1"\ntask = "t"',
        {
            "one": ("weight = 1", "run.sh", f"echo '{PASS2}' > \"$SRB_RESULT\"\n"),
            "two": (
                "weight = 3",
                "run.py",
                "import json, os\njson.dump([{'id': 'c', 'verdict': 'pass'}], "
                "open(os.environ['SRB_RESULT'], 'w'))\n",
            ),
        },
    )
    repo = write_tree(tmp_path / "repo", {"f": "x"})
    result = tmp_path / "r.json"
    done = run_grader(
        "suite",
        "--suite",
        str(suite / "suite.toml"),
        "--repo",
        str(repo),
        "--result",
        str(result),
        "--work",
        str(tmp_path / "w"),
    )
    assert done.returncode == 0, done.stderr
    data = read_json(result)
    assert data["metadata"]["complete"] is True and data["metadata"]["rate"] == 1.0
    assert [u["status"] for u in data["units"]] == ["ok", "ok"]
    assert data["units"][0]["message"] == "exit 0; 2 checks"


def test_bad_suite_reports_every_problem_and_writes_an_error_envelope(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.toml").write_text(
        'schema = "nope"\ndefault_timeout_sec = -1\n'
        '[[module]]\nid = "a"\nweight = -2\n[[module]]\nid = "a"\n'
        '[[module]]\nid = "b"\ndir = "../../escape"\ncommand = "bash run.sh"\n'
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "suite")
    problems = caught.value.problems
    # The host's task loader reads suite.toml by the same rules and sentences.
    assert problems == [
        "schema: expected `swerefactor.behavioural-suite/1`, found `nope`",
        "task: required key is missing",
        "default_timeout_sec: must be greater than 0 (found -1)",
        "module[0].weight: must be at least 0 (found -2)",
        'module[2].command: expected an array of strings, found the string "bash run.sh"',
        "module[2].dir: `../../escape` must be a relative path inside the suite's folder",
        "module[1].id: duplicate module id `a`",
    ]
    result = tmp_path / "r.json"
    repo = write_tree(tmp_path / "repo", {"f": "x"})
    done = run_grader(
        "suite",
        "--suite",
        str(tmp_path / "suite"),
        "--repo",
        str(repo),
        "--result",
        str(result),
        "--work",
        str(tmp_path / "w"),
    )
    assert done.returncode == 2
    assert "suite.toml" in done.stderr and "Traceback" not in done.stderr
    data = read_json(result)
    assert data["status"] == "error" and data["units"] == []
    assert "duplicate module id `a`" in data["notes"][0]


def test_unparsable_suite_is_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "suite.toml").write_text("schema = \n")
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "suite.toml")
    assert str(caught.value).startswith(f"{tmp_path / 'suite.toml'}: cannot read: ")


def test_killed_runner_leaves_an_honest_partial_record(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path / "suite",
        'schema = "swerefactor.behavioural-suite/1"\ntask = "partial"',
        {
            "first": ("weight = 1", "run.sh", f"echo '{PASS2}' > \"$SRB_RESULT\"\n"),
            "second": (
                "weight = 1",
                "run.sh",
                'echo $$ > "$SRB_SUITE_WORK/second.pid"\nsleep 120\n',
            ),
            "third": ("weight = 1", "run.sh", f"echo '{PASS2}' > \"$SRB_RESULT\"\n"),
        },
    )
    repo = write_tree(tmp_path / "repo", {"f": "x"})
    result = tmp_path / "r.json"
    pid_file = tmp_path / "w" / "suite" / "second.pid"
    runner = subprocess.Popen(
        grader_cmd(
            "suite",
            "--suite",
            str(suite),
            "--repo",
            str(repo),
            "--result",
            str(result),
            "--work",
            str(tmp_path / "w"),
        ),
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    second_pid = 0
    try:
        wait_for(
            lambda: pid_file.exists() and pid_file.read_text().strip() != "",
            what="the second module to start",
        )
        second_pid = int(pid_file.read_text())
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=10)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        if second_pid:
            kill_group_if_alive(second_pid)
    data = read_json(result)
    assert data["status"] == "running"
    statuses = [(u["id"], u["status"]) for u in data["units"]]
    assert statuses == [("first", "ok"), ("second", "unreached"), ("third", "unreached")]
    second = data["units"][1]
    assert "started_at" in second
    assert second["message"] == "started; no outcome recorded (the stage stopped while it ran)"
    assert data["units"][2]["message"] == "not run"
    assert data["metadata"]["complete"] is False and data["metadata"]["checks_passed"] == 2
