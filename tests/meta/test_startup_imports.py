"""Every package that exports on first use (srb_tui.lazy) hands out exactly what it lists.

The names live only in each ``__init__``'s ``TYPE_CHECKING`` block, so a typo, a name
dropped from a submodule, or a submodule that shadows an exported name (importing
``pkg.name`` sets the package attribute ``name`` to the module) would only show at the
first caller; this test asks for every name in a fresh interpreter after every submodule
of the room has been imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import srb_tui
from tests.conftest import DEMO_TASK

ROOT = Path(srb_tui.__file__).parent

PROBE = r"""
import importlib, json, pkgutil, sys, types
from srb_tui.lazy import _table
package = importlib.import_module(sys.argv[1])
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    importlib.import_module(info.name)  # every submodule loaded: shadowing shows now
table = _table(package.__name__)
bad = []
for name in package.__all__:
    value = getattr(package, name)
    module, attr = table[name]
    if isinstance(value, types.ModuleType) or value is not getattr(sys.modules[module], attr):
        bad.append(name)
print(json.dumps({"all": sorted(package.__all__), "table": sorted(table), "bad": bad}))
"""


def _lazy_packages() -> list[str]:
    found = []
    for init in sorted(ROOT.rglob("__init__.py")):
        if "exports_on_first_use(__name__)" in init.read_text(encoding="utf-8"):
            rel = init.parent.relative_to(ROOT.parent)
            found.append(".".join(rel.parts))
    return found


def test_the_rooms_export_on_first_use() -> None:
    # The launch path depends on these being lazy (bench/bench_launch.py).
    assert {"srb_tui.runner", "srb_tui.store", "srb_tui.schema"} <= set(_lazy_packages())


def test_every_listed_name_resolves_to_its_submodule_object() -> None:
    for package in _lazy_packages():
        done = subprocess.run([sys.executable, "-c", PROBE, package], capture_output=True,
                              text=True, check=False)
        assert done.returncode == 0, f"{package}: {done.stderr[-1500:]}"
        found = json.loads(done.stdout)
        assert found["all"] == found["table"], f"{package}: __all__ and TYPE_CHECKING differ"
        assert found["bad"] == [], f"{package}: shadowed or wrong: {found['bad']}"


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    import srb_tui.store as store

    try:
        store.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "srb_tui.store" in str(exc) and "NoSuchThing" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_every_dataclass_has_a_docstring() -> None:
    # Documentation first; and on Python 3.11 a dataclass without one pays for an
    # inspect.signature() at import to make its __doc__ (about half a millisecond each,
    # on every `srb run`).
    import ast

    missing = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                    "dataclass" in ast.unparse(d) for d in node.decorator_list) and \
                    ast.get_docstring(node) is None:
                missing.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name}")
    assert missing == []


MODULES_AFTER = r"""
import contextlib, io, json, sys
from srb_tui.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""
# What a command that neither runs nor grades must not load: the run service (and with it
# the engine client and every agent), the console, the campaign scheduler.
HEAVY = ("srb_tui.service.app", "srb_tui.service.run", "srb_tui.runner.containers",
         "srb_tui.campaigns.scheduler", "srb_tui.campaigns.calls", "docker", "textual",
         "numpy", "scipy")


def _loaded(*argv: str, env: dict[str, str] | None = None) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", MODULES_AFTER, *argv], capture_output=True,
                          text=True, check=False, env=env)
    assert done.returncode == 0, done.stderr[-1500:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return found["code"], set(found["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_version_loads_no_command_module() -> None:
    code, modules = _loaded("--version")
    assert code == 0
    assert not any(m.startswith("srb_tui.commands.") and m not in (
        "srb_tui.commands.exit_codes", "srb_tui.commands.output") for m in modules), \
        sorted(m for m in modules if m.startswith("srb_tui.commands."))
    assert _heavy(modules) == []
    assert "srb_tui.store" not in modules and "rich.table" not in modules


def test_campaign_status_reads_the_store_without_the_run_service(tmp_path: Path) -> None:
    code, modules = _loaded("--state", str(tmp_path / "state"), "campaign", "status", "nope")
    assert code != 0  # no store there: an error, after the parser and the command loaded
    assert "srb_tui.commands.campaign" in modules
    assert _heavy(modules) == []


# What `srb run` of a built-in agent must not have loaded when its agent's container starts
# (bench/bench_launch.py): docker-py and its HTTP stack, the console, the grading side and
# the record families a launch never reads, the reaper, the real clients' code.
LAUNCH_HEAVY = ("docker", "requests", "urllib3", "textual", "tarfile",
                "srb_tui.ui", "srb_tui.campaigns", "srb_tui.reports", "srb_tui.scoring",
                "srb_tui.service.grading.ladder", "srb_tui.service.run.run_grading",
                "srb_tui.store.grading_records", "srb_tui.store.strength_records",
                "srb_tui.store.ledger_records", "srb_tui.store.campaign_records",
                "srb_tui.runner.reaper", "srb_tui.agents.clients", "srb_tui.agents.adapters",
                "srb_tui.agents.streams")


def _launch_heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules
                  if any(m == h or m.startswith(h + ".") for h in LAUNCH_HEAVY))


def test_srb_run_imports_nothing_heavy_before_it_asks_the_engine(tmp_path: Path) -> None:
    # No engine answers here: what the command loaded before it found that out (its module
    # and the run service's, the store opened meanwhile) is all there is to see.
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    code, modules = _loaded("--tasks", str(DEMO_TASK.parent), "--state",
                            str(tmp_path / "state"), "run", DEMO_TASK.name, "--agent",
                            "command:echo started", "--no-grade", "--json", env=env)
    assert code != 0  # unavailable, after the imports
    assert "srb_tui.service.run.orchestrator" in modules and "srb_tui.store.store" in modules
    assert _launch_heavy(modules) == []


LOADED_AT_START = r"""
import contextlib, io, json, sys
import srb_tui.runner.wire as wire
seen = {}
real_start = wire.Wire.start
def start(self, cid):
    seen.setdefault("modules", sorted(sys.modules))
    return real_start(self, cid)
wire.Wire.start = start
from srb_tui.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": seen.get("modules")}))
"""


@pytest.mark.docker
def test_srb_run_starts_its_agent_before_loading_anything_heavy(tmp_path: Path) -> None:
    argv = ["--tasks", str(DEMO_TASK.parent), "--state", str(tmp_path / "state"), "run",
            DEMO_TASK.name, "--agent", "command:echo started", "--no-grade", "--json"]
    # As the bench measures it: State A cached, the images there, the archive's facts kept
    # (kept from the second run on: the first has no cache folder to keep them in yet).
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", LOADED_AT_START, *argv],
                              capture_output=True, text=True, check=False, timeout=900)
        assert done.returncode == 0, done.stderr[-1500:]
        found = json.loads(done.stdout.strip().splitlines()[-1])
        assert found["code"] == 0 and found["modules"], "the agent's container never started"
    assert _launch_heavy(set(found["modules"])) == []
