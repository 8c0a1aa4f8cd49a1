"""Fixtures shared by every test folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.config import Settings

REPO = Path(__file__).resolve().parents[1]
BUILTIN_TASKS = REPO / "tasks"
DEMO_TASK = BUILTIN_TASKS / "demo01-csvtab-python-to-node"
DEMO02_TASK = BUILTIN_TASKS / "demo02-shelf-httpserver-to-aiohttp"
DEMO03_TASK = BUILTIN_TASKS / "demo03-greet-make-to-cmake"


def _official_tasks() -> Path:
    """The 20 published manifests: ``SRB_OFFICIAL_TASKS``, else ``../shared/reference/
    official-tasks`` beside the checkout. They are not part of the repository."""
    import os

    if os.environ.get("SRB_OFFICIAL_TASKS"):
        return Path(os.environ["SRB_OFFICIAL_TASKS"])
    return REPO.parent / "shared" / "reference" / "official-tasks"


OFFICIAL_TASKS = _official_tasks()
OFFICIAL_MISSING = (
    f"the 20 official task manifests are not at {OFFICIAL_TASKS}: set SRB_OFFICIAL_TASKS to "
    "a copy of Einsia/SWE-Refactor-Bench's tasks/ (manifests suffice), or place it at "
    "../shared/reference/official-tasks beside the checkout"
)


@pytest.fixture
def official_tasks() -> Path:
    """The official manifests' folder; the test is skipped (named, with how to get them)
    when they are absent, except under ``CI=true`` where absence fails the test."""
    import os

    if not OFFICIAL_TASKS.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(OFFICIAL_MISSING)
        pytest.skip(OFFICIAL_MISSING)
    return OFFICIAL_TASKS


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


@pytest.fixture
def builtin_settings(state_dir: Path) -> Settings:
    """The built-in tasks with an empty, private state directory."""
    return Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir)


def _managed_containers() -> set[str] | None:
    """Names of srb-managed containers (and volumes) on the engine, or None without one."""
    import subprocess

    try:
        cons = subprocess.run(
            ["docker", "ps", "-a", "--filter", "label=srb.managed=1", "--format", "{{.Names}}"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout.split()
        vols = subprocess.run(
            ["docker", "volume", "ls", "--filter", "label=srb.managed=1", "--format",
             "volume:{{.Name}}"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    nodes = _test_nodes()
    return set(cons) | set(vols) | nodes


def _test_nodes() -> set[str]:
    """Containers and networks of tests/nodes' Docker-in-Docker nodes (label srb.test-node)."""
    import subprocess

    flt = "label=srb.test-node=1"
    try:
        cons = subprocess.run(["docker", "ps", "-a", "--filter", flt, "--format", "{{.Names}}"],
                              capture_output=True, text=True, timeout=30, check=True).stdout
        nets = subprocess.run(["docker", "network", "ls", "--filter", flt, "--format",
                               "network:{{.Name}}"],
                              capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return set(cons.split()) | set(nets.split())


_BEFORE: set[str] | None = None

# Every Python-level open of a store file (srb.sqlite3, its -wal, -shm, -journal) made by srb's
# own code during the session, with the srb frame that made it (issue 33: only SQLite may
# hold a descriptor of them; closing one drops the process's SQLite locks). Test code may
# open them (to corrupt a file on purpose); srb_tui may not, whether a store is open or not.
_STORE_OPENS: list[str] = []
_SRB_CODE = str(REPO / "srb_tui") + "/"
_STORE_SUFFIXES = (".sqlite3", ".sqlite3-wal", ".sqlite3-shm", ".sqlite3-journal")


def _store_open_audit(event: str, args: tuple[object, ...]) -> None:
    if event != "open" or not args or not isinstance(args[0], str | bytes | Path):
        return
    import os
    import sys

    name = os.fsdecode(args[0])  # type: ignore[arg-type]
    if not name.endswith(_STORE_SUFFIXES):
        return
    frame = sys._getframe(1)
    while frame is not None:
        where = frame.f_code.co_filename
        if where.startswith(_SRB_CODE) and not where.endswith("store/guard.py"):
            _STORE_OPENS.append(f"{name} opened by {where}:{frame.f_lineno}")
            return
        frame = frame.f_back  # type: ignore[assignment]


def pytest_sessionstart(session: pytest.Session) -> None:
    import sys

    global _BEFORE
    _BEFORE = _managed_containers()
    sys.addaudithook(_store_open_audit)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the session if srb's code opened a store file outside SQLite, or if it left
    srb-managed containers or volumes behind."""
    if _STORE_OPENS:
        print("\nsrb code opened store files outside SQLite:\n  "
              + "\n  ".join(sorted(set(_STORE_OPENS))[:20]))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if _BEFORE is None:
        return
    after = _managed_containers() or set()
    left = sorted(after - _BEFORE)
    if left:
        print(f"\nsrb-managed containers/volumes left by the test session: {', '.join(left)}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The demo01 ladder shared by tests/ladder and tests/integrity, one per session (registered
# here so both folders see the same fixture; imported last: it reads DEMO_TASK above).
from tests.ladder.harness import ladder  # noqa: E402, F401
