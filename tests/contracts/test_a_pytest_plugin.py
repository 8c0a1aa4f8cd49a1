"""srb's pytest plugin under the published module contract, run by the real grader.

A behavioural module here is a pytest file started as ``python -m pytest -p
swerefactor.pytest_module``; it imports a helper from the suite's ``lib/`` (on PYTHONPATH
first) and the runner must provide ``swerefactor`` from srb's own files. No Docker: the
grader runs on the host, as a stage container would run it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from srb_tui.grader.suite.manifest import load_suite
from srb_tui.grader.suite.module_env import SRB_RUNTIME, module_env, python_path

from ..grader.helpers import read_json, run_grader, write_tree

SUITE = """
schema = "swerefactor.behavioural-suite/1"
task = "plugin-fixture"
lib_dir = "lib"
default_timeout_sec = 60

[env]
SRB_SHIM = "enforce"

[[module]]
id = "cases"
weight = 1
command = ["{python}", "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "-p", "swerefactor.pytest_module", "test_cases.py"]
"""

CASES = '''
import os
import pytest
from helper import double
from swerefactor.contract import CONTRACT_ENV, submission_env


def test_helper_from_lib():
    assert double(21) == 42


@pytest.mark.srb_weight(0)
def test_observation_fails_unscored():
    assert double(1) == 3, "an observation that does not count"


@pytest.mark.srb_skip_ok
def test_licensed_skip():
    pytest.skip("no optional artefact")


def test_unlicensed_skip():
    pytest.skip("gave up")


@pytest.mark.srb_group("env")
def test_contract_env():
    assert os.environ["SRB_SHIM"] == "enforce"
    assert "SRB_ORIGINAL" not in os.environ
    scrubbed = submission_env()
    assert not CONTRACT_ENV & set(scrubbed) and scrubbed["SRB_SHIM"] == "enforce"


@pytest.fixture
def broken():
    raise RuntimeError("setup exploded")


def test_setup_error(broken):
    pass


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert double(n) == 2 * n
'''


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    base = tmp_path_factory.mktemp("plugin")
    suite = write_tree(base / "suite", {
        "suite.toml": SUITE.replace("{python}", sys.executable),
        "lib/helper.py": "def double(x):\n    return 2 * x\n",
        "modules/cases/test_cases.py": CASES,
    })
    repo = write_tree(base / "repo", {"README": "x\n"})
    out = base / "out" / "behavioural.json"
    done = run_grader("suite", "--suite", str(suite), "--repo", str(repo), "--result",
                      str(out), "--work", str(base / "work"))
    assert done.returncode == 0, done.stderr
    data = read_json(out)
    unit = data["units"][0]
    assert unit["status"] == "ok", unit
    return {"unit": unit, **{c["id"]: c for c in data["checks"]}}


def test_one_check_per_node_id(result: dict[str, dict]) -> None:
    ids = sorted(k for k in result if k != "unit")
    assert ids == sorted(f"test_cases.py::{name}" for name in (
        "test_helper_from_lib", "test_observation_fails_unscored", "test_licensed_skip",
        "test_unlicensed_skip", "test_contract_env", "test_setup_error",
        "test_param[1]", "test_param[2]"))
    assert result["unit"]["metadata"]["runner"] == "pytest"
    assert result["unit"]["metadata"]["plugin"] == "srb", "srb's plugin, not a published one"


def test_verdicts_and_markers(result: dict[str, dict]) -> None:
    assert result["test_cases.py::test_helper_from_lib"]["verdict"] == "pass"
    obs = result["test_cases.py::test_observation_fails_unscored"]
    assert (obs["verdict"], obs["scored"]) == ("fail", False)
    assert "an observation that does not count" in obs["summary"]
    licensed = result["test_cases.py::test_licensed_skip"]
    assert licensed["verdict"] == "skip" and licensed["summary"] == "skipped: no optional artefact"
    unlicensed = result["test_cases.py::test_unlicensed_skip"]
    assert unlicensed["verdict"] == "fail"
    assert unlicensed["summary"] == "skipped, which the contract does not permit: gave up"
    assert result["test_cases.py::test_setup_error"]["verdict"] == "error"
    assert result["test_cases.py::test_contract_env"]["verdict"] == "pass"
    # 8 checks, 7 scored: helper, contract, 2 params pass; licensed skip stays in the pool.
    unit = result["unit"]
    assert (unit["scored"], unit["passed"], unit["skipped"], unit["failed"], unit["errored"]) \
        == (7, 4, 1, 1, 1)


def test_group_and_skip_license_reach_the_result_file(tmp_path: Path) -> None:
    """The raw module result (before the runner normalises it) carries the metadata."""
    suite = write_tree(tmp_path / "s", {
        "suite.toml": SUITE.replace("{python}", sys.executable),
        "lib/helper.py": "def double(x):\n    return 2 * x\n",
        "modules/cases/test_cases.py": CASES,
    })
    work = tmp_path / "w"
    done = run_grader("suite", "--suite", str(suite), "--repo", str(suite), "--result",
                      str(tmp_path / "r.json"), "--work", str(work))
    assert done.returncode == 0, done.stderr
    raw = json.loads((work / "results" / "cases.json").read_text())
    by_id = {c["id"]: c for c in raw["checks"]}
    assert by_id["test_cases.py::test_contract_env"]["metadata"] == {"group": "env"}
    assert by_id["test_cases.py::test_licensed_skip"]["metadata"] == {"permitted_skip": True}


def test_pythonpath_prepends_lib_and_runtime(tmp_path: Path) -> None:
    suite_dir = write_tree(tmp_path / "suite", {
        "suite.toml": SUITE.replace("{python}", sys.executable), "lib/helper.py": ""})
    suite = load_suite(suite_dir)
    module = suite.modules[0]
    env = module_env(suite, module, repo=tmp_path, original=None, work=tmp_path,
                     suite_work=tmp_path, result=tmp_path / "r.json", deadline=0.0,
                     base={"PYTHONPATH": "/opt/image/site", "SRB_IMAGE_INPUT": "x",
                           "SRB_STALE": "y", "SRB_RESULT": "forged", "LC_ALL": "de_DE.UTF-8"},
                     keep=frozenset({"SRB_IMAGE_INPUT", "SRB_RESULT"}))
    assert env["PYTHONPATH"].split(":") == [str(suite_dir / "lib"), str(SRB_RUNTIME),
                                            "/opt/image/site"]
    assert env["SRB_IMAGE_INPUT"] == "x", "an SRB_* name the image declares is kept"
    assert "SRB_STALE" not in env and "SRB_ORIGINAL" not in env
    assert env["SRB_RESULT"] == str(tmp_path / "r.json"), "runner names are never kept"
    assert env["LC_ALL"] == "de_DE.UTF-8", "the image's locale is kept"
    published = write_tree(tmp_path / "opt-swerefactor", {"swerefactor/__init__.py": ""})
    assert python_path(suite, None, None).split(":")[0] == str(suite_dir / "lib")
    from srb_tui.grader.suite.module_env import runtime_dir
    assert runtime_dir(published) == published
    assert runtime_dir(tmp_path / "absent") == SRB_RUNTIME
