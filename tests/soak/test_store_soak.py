"""Many processes on one store, for minutes, and nothing is lost (issue 33).

The console (the real app, driven by Pilot in this process) opens every screen that reads
the store — Runs, a Run, its Diff (which used to open a second store in the console and
drop the console's SQLite locks), Counterexamples, Tasks — in a loop, and launches a run of
its own, while other *processes* use the same store: ``srb run`` (agent phase; a graded run
too with ``SRB_FULL_FAULTS=1``), ``srb runs list`` / ``runs show``, ``srb runs cancel`` on a
live run whose ``srb run`` was killed, ``srb gc``, ``srb report`` and ``srb import`` of new
job folders.

Checked *during* the soak, not only at the end: every run a process has finished is seen
with its status by the console's own store and by the next ``srb runs list`` / ``runs show``
of another process; the console's run is seen by the CLI. At the end: ``PRAGMA
integrity_check`` is ``ok`` and every write each process made (runs, cancels, imports) is
still there: nothing one process did was undone by another.

The default tier soaks for about a minute; ``SRB_FULL_FAULTS=1`` for four minutes with a
graded run among the writers. The figures (processes, operations, duration, integrity) are
printed at the end (``-s`` shows them).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from textual.worker import WorkerCancelled

from srb_tui.config import Settings
from srb_tui.ui.console_service import LaunchRequest
from srb_tui.ui.screens.counterexamples import CounterexamplesScreen
from srb_tui.ui.screens.diff import DiffScreen
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.screens.runs import RunsScreen
from tests.faults.harness import FULL, TASK, env, fast_tasks, srb_argv
from tests.reports.test_import import _job
from tests.ui.helpers import quiet_app, until

pytestmark = pytest.mark.docker

SOAK_SEC = 240.0 if FULL else 60.0
QUICK_AGENT = "command:bash -c 'echo soak > soak.txt; echo written'"
SLEEPER = "command:bash -c 'echo up; sleep 600'"
TERMINAL = ("scored", "cancelled", "infra_error", "collecting")


@dataclass
class Ledger:
    """What each process wrote and what every reader must see, shared by the threads."""

    expected: dict[str, str] = field(default_factory=dict)  # run id -> final status
    imported: int = 0
    operations: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def expect(self, run_id: str, status: str) -> None:
        with self.lock:
            self.expected[run_id] = status

    def snapshot(self) -> dict[str, str]:
        with self.lock:
            return dict(self.expected)

    def count(self, what: str) -> None:
        with self.lock:
            self.operations[what] = self.operations.get(what, 0) + 1

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)


def _srb(state: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(srb_argv(state, *args), env=env(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _json(done: subprocess.CompletedProcess[str], what: str) -> Any:
    assert done.returncode == 0, f"{what}: rc {done.returncode}\n{done.stderr[-2000:]}"
    return json.loads(done.stdout)


def _loop(deadline: float, ledger: Ledger, name: str, body: Callable[[], None]) -> None:
    try:
        while time.monotonic() < deadline:
            body()
    except BaseException as exc:  # a failed check or a crash: the test names it
        ledger.problem(f"{name}: {type(exc).__name__}: {exc}")


def _runner(state: Path, ledger: Ledger, graded_first: bool) -> Callable[[], None]:
    """``srb run`` processes: the agent phase (and one graded run in the full soak)."""
    first = [graded_first]

    def body() -> None:
        if first[0]:
            first[0] = False
            args = ("run", TASK, "--agent", "replay:subtle", "--adversary-budget", "5",
                    "--json")
        else:
            args = ("run", TASK, "--agent", QUICK_AGENT, "--no-grade", "--json")
        run = _json(_srb(state, *args), "srb run")["run"]
        ledger.expect(run["id"], run["status"])
        ledger.count("srb run")

    return body


def _canceller(state: Path, ledger: Ledger) -> Callable[[], None]:
    """A live run whose ``srb run`` process was SIGKILLed (its agent container still
    running), cancelled by another process: what an operator does after a crash."""

    def body() -> None:
        proc = subprocess.Popen(srb_argv(state, "run", TASK, "--agent", SLEEPER, "--no-grade",
                                         "--json"), env=env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        try:
            run_id = _wait_live(state, ledger)
        finally:
            proc.kill()
            proc.wait()
        done = _srb(state, "runs", "cancel", run_id)
        assert done.returncode == 0, f"runs cancel {run_id}: {done.stderr[-1000:]}"
        ledger.expect(run_id, "cancelled")
        ledger.count("srb runs cancel")

    return body


def _wait_live(state: Path, ledger: Ledger, timeout: float = 600) -> str:
    """The sleeper run once another process's ``runs list`` shows it in its agent phase."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = _json(_srb(state, "runs", "list", "--json", "--limit", "100000"),
                     "runs list")["runs"]
        ledger.count("srb runs list")
        for row in rows:
            if row["agent"] == SLEEPER and row["status"] == "agent":
                return str(row["id"])
        time.sleep(0.5)  # polling another process's progress, not synchronising threads
    raise AssertionError("the sleeper run never showed as live in `srb runs list`")


def _reader(state: Path, ledger: Ledger) -> Callable[[], None]:
    """Another process sees every finished write, while the soak goes on."""

    def body() -> None:
        want = ledger.snapshot()
        rows = _json(_srb(state, "runs", "list", "--json", "--limit", "100000"),
                     "runs list")["runs"]
        ledger.count("srb runs list")
        seen = {str(r["id"]): str(r["status"]) for r in rows}
        for run_id, status in want.items():
            if seen.get(run_id) != status:
                ledger.problem(f"`srb runs list` shows {run_id} as {seen.get(run_id)}, "
                               f"recorded {status}")
        for run_id in list(want)[-2:]:
            doc = _json(_srb(state, "runs", "show", run_id, "--json"), "runs show")
            ledger.count("srb runs show")
            shown = doc.get("status") or doc.get("run", {}).get("status")
            if shown != want[run_id]:
                ledger.problem(f"`srb runs show {run_id}` says {shown}, recorded {want[run_id]}")

    return body


def _admin(state: Path, ledger: Ledger, jobs: Path) -> Callable[[], None]:
    """gc, report and imports of new job folders."""
    n = [0]

    def body() -> None:
        n[0] += 1
        job = _job(jobs / f"j{n[0]}")
        done = _srb(state, "import", str(job))
        assert done.returncode == 0 and "imported 3 run(s)" in done.stdout, done.stderr[-1000:]
        with ledger.lock:
            ledger.imported += 3
        ledger.count("srb import")
        doc = _json(_srb(state, "report", "--json"), "report")
        assert doc["counts"]["imported"] >= 3 * n[0] - 0, doc["counts"]
        ledger.count("srb report")
        done = _srb(state, "gc")
        assert done.returncode == 0, f"gc: {done.stderr[-1000:]}"
        ledger.count("srb gc")

    return body


async def _console_sees(app: Any, ledger: Ledger) -> None:
    store = await app.run_host.store()
    for run_id, status in ledger.snapshot().items():
        record = await store.runs.get_run(run_id)
        seen = None if record is None else record.status
        if seen != status:
            ledger.problem(f"the console's store shows {run_id} as {seen}, recorded {status}")


async def _console_round(pilot: Any, app: Any, ledger: Ledger) -> None:
    """Every screen that reads the store, once; then the console's view of every write."""
    await pilot.press("r")
    await until(pilot, lambda: isinstance(app.screen, RunsScreen), "the Runs screen", 60)
    ledger.count("console: Runs")
    runs = list(ledger.snapshot())
    if runs:
        run_id = runs[-1]
        diff = DiffScreen(run_id, settings=app.settings)
        app.push_screen(diff)
        await until(pilot, lambda: diff.comparison is not None or diff.problem, "the diff", 120)
        if diff.problem and ("no such run" in diff.problem or "store" in diff.problem):
            ledger.problem(f"the console's Diff of {run_id}: {diff.problem}")
        ledger.count("console: Diff")
        app.pop_screen()
        run = RunScreen(app.run_host, run_id)
        app.push_screen(run)
        await until(pilot, lambda: run.detail is not None or run.problem, "the Run screen", 60)
        if run.detail is None:
            ledger.problem(f"the console's Run screen of {run_id}: {run.problem}")
        ledger.count("console: Run")
        app.pop_screen()
        cex = CounterexamplesScreen(app.run_host, run_id)
        app.push_screen(cex)
        await pilot.pause()
        with contextlib.suppress(WorkerCancelled):  # an exclusive worker made way for a newer
            await app.workers.wait_for_complete()
        ledger.count("console: Counterexamples")
        app.pop_screen()
    await pilot.press("escape")
    await _console_sees(app, ledger)
    ledger.count("console: checks")


async def _console_launch(pilot: Any, app: Any, ledger: Ledger) -> str:
    """A run launched from the console, driven by it; the CLI must see it."""
    launched: list[str] = []
    app.run_host.launch(LaunchRequest(task_id=TASK, agent=QUICK_AGENT, budget_sec=120),
                        lambda runs: launched.extend(r.id for r in runs))
    await until(pilot, lambda: launched, "the console's launch", 120)
    store = await app.run_host.store()

    async def status() -> str | None:
        record = await store.runs.get_run(launched[0])
        return None if record is None else record.status

    deadline = time.monotonic() + 600
    while (found := await status()) not in TERMINAL:
        assert time.monotonic() < deadline, f"the console's run stays {found}"
        await pilot.pause(0.2)
    assert found is not None
    ledger.expect(launched[0], found)
    ledger.count("console: launch")
    return launched[0]


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    except sqlite3.DatabaseError as exc:  # the file no longer reads as a database
        return f"failed: {exc}"
    finally:
        conn.close()


def _final(db: Path) -> tuple[dict[str, str], int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        runs = {str(i): str(s) for i, s in conn.execute("SELECT id, status FROM runs")}
        imported = int(conn.execute("SELECT count(*) FROM imported_runs").fetchone()[0])
        return runs, imported
    finally:
        conn.close()


async def test_many_processes_share_one_store_and_nothing_is_lost(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    settings = Settings(task_roots=(fast_tasks(),), state_dir=state)
    ledger = Ledger()
    # A first run so that the console has something to show from its first round.
    first = _json(_srb(state, "run", TASK, "--agent", QUICK_AGENT, "--no-grade", "--json"),
                  "first srb run")["run"]
    ledger.expect(first["id"], first["status"])
    started = time.monotonic()
    deadline = started + SOAK_SEC
    jobs = tmp_path / "jobs"
    workers = [
        threading.Thread(target=_loop, args=(deadline, ledger, name, body), name=name)
        for name, body in (
            ("runner", _runner(state, ledger, graded_first=FULL)),
            ("canceller", _canceller(state, ledger)),
            ("reader", _reader(state, ledger)),
            ("admin", _admin(state, ledger, jobs)),
        )
    ]
    app = quiet_app(settings, grade=False)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            for worker in workers:
                worker.start()
            await _console_launch(pilot, app, ledger)
            while time.monotonic() < deadline or any(w.is_alive() for w in workers):
                await _console_round(pilot, app, ledger)
                if time.monotonic() > deadline + 900:
                    ledger.problem("the soak's processes did not end 15 min after its end")
                    break
            await _console_round(pilot, app, ledger)  # everything written is seen
    finally:
        for worker in workers:
            worker.join(timeout=900)
    elapsed = time.monotonic() - started
    integrity = _integrity(state / "srb.sqlite3")
    assert integrity == "ok", f"PRAGMA integrity_check after the soak: {integrity}"
    runs, imported = _final(state / "srb.sqlite3")
    for run_id, status in ledger.expected.items():
        if runs.get(run_id) != status:
            ledger.problem(f"at the end {run_id} is {runs.get(run_id)}, recorded {status}")
    print(f"\nstore soak: {elapsed:.0f} s, processes and operations {ledger.operations}, "
          f"{len(runs)} runs ({imported} imported), integrity_check {integrity}")
    assert imported == ledger.imported
    assert not ledger.problems, "\n".join(ledger.problems[:30])
    assert ledger.operations.get("srb runs cancel", 0) >= 1
    assert ledger.operations.get("console: Diff", 0) >= 2
