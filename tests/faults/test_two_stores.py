"""Two stores on one engine: ``srb gc``, ``srb resume`` and ``srb runs cancel`` in store Y
never touch store X's containers (its live agent, a relay sidecar, a stage container),
not even when Y is a copy of X that knows the same run ids."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from srb_tui.runner import store_tag
from tests.faults.harness import (
    Outcome,
    kill_at,
    managed,
    only_run,
    remove_run_containers,
    run_row,
    srb,
)

pytestmark = pytest.mark.docker
SLEEPER = "command:bash -c 'echo up; sleep 600'"


def _extra(run_id: str, role: str, tag: str | None) -> str:
    """A container like srb's own for ``run_id`` (a stage container, a relay)."""
    labels = ["--label", "srb.managed=1", "--label", f"srb.run={run_id}",
              "--label", f"srb.role={role}"]
    if tag is not None:
        labels += ["--label", f"srb.store={tag}"]
    done = subprocess.run(["docker", "create", "--name", f"srb-{run_id}-{role}", *labels,
                           "srb/base:bookworm", "sleep", "infinity"],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _running(name: str) -> bool:
    out = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", name],
                         capture_output=True, text=True, check=False).stdout.strip()
    return out == "true"


def test_gc_resume_and_cancel_in_one_store_leave_the_others_containers(
        tmp_path: Path) -> None:
    x, y = tmp_path / "x" / "state", tmp_path / "y" / "state"
    kill_at(x, "agent:started", SLEEPER, grade=False)
    x_run = only_run(x)
    x_tag = store_tag(x / "srb.sqlite3")
    y_run = ""
    try:
        _extra(x_run, "audit", x_tag)
        _extra(x_run, "relay", x_tag)
        x_names = managed(f"srb.run={x_run}")
        assert len(x_names) == 3 and _running(f"srb-{x_run}-agent")
        stage_label = subprocess.run(
            ["docker", "inspect", "-f", '{{index .Config.Labels "srb.store"}}',
             f"srb-{x_run}-agent"], capture_output=True, text=True, check=True).stdout
        assert stage_label.strip() == x_tag

        # store Y: one finished run, with a leftover labelled and an unlabelled container
        kill_at(y, "agent:started", SLEEPER, grade=False)
        y_run = only_run(y)
        assert srb(y, "runs", "cancel", y_run).returncode == 0
        assert managed(f"srb.run={y_run}") == []
        _extra(y_run, "audit", store_tag(y / "srb.sqlite3"))
        _extra(y_run, "verification", None)  # as stage containers were before the label

        gc = srb(y, "gc", "--json")
        assert gc.returncode == 0, gc.stderr
        doc = json.loads(gc.stdout)
        assert doc["containers_removed"] == 2 and doc["other_stores_containers_kept"] >= 3
        assert managed(f"srb.run={y_run}") == []
        resumed = srb(y, "resume", "--no-grade", "--json")
        assert resumed.returncode == 0 and json.loads(resumed.stdout)["resumed"] == []
        assert managed(f"srb.run={x_run}") == x_names and _running(f"srb-{x_run}-agent")

        # store Z: a copy of X (same run ids, another file): resume and gc leave X alone
        z = tmp_path / "z" / "state"
        z.mkdir(parents=True)
        src = sqlite3.connect(x / "srb.sqlite3")
        with sqlite3.connect(z / "srb.sqlite3") as dst:
            src.backup(dst)  # the WAL included, as `cp -r state` of a quiet store would be
        src.close()
        resumed = srb(z, "resume", "--no-grade", "--json")
        assert run_row(z, x_run)["status"] == "infra_error", resumed.stderr[-2000:]
        assert srb(z, "gc").returncode == 0
        assert srb(z, "runs", "cancel", x_run).returncode == 0
        assert managed(f"srb.run={x_run}") == x_names and _running(f"srb-{x_run}-agent")
        assert run_row(x, x_run)["status"] == "agent"  # X's own record is untouched
        Outcome("two-stores", "gc+resume+cancel from another store", "resumed").record()
    finally:
        # X cleans up after itself: cancel removes its containers, and only its own
        cancel = srb(x, "runs", "cancel", x_run)
        leftover = managed(f"srb.run={x_run}")
        remove_run_containers(x_run)
        if y_run:
            remove_run_containers(y_run)
    assert cancel.returncode == 0 and leftover == [], (cancel.stderr, leftover)
