"""The store locked, read-only, truncated or written by a newer srb: a message naming the
file, never a traceback, nothing overwritten. Two srb processes on one run: the one that
holds the lease drives it, the other says who (pid, host) and leaves it alone."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from srb_tui.store import SCHEMA_VERSION, Store
from tests.faults.harness import (
    Outcome,
    env,
    only_run,
    remove_run_containers,
    run_argv,
    run_row,
    srb,
    srb_argv,
    wait_for,
)
from tests.faults.test_sigkill import GRADING_AGENT

REPO_CMD = ("runs", "list", "--json")


def _made_store(tmp_path: Path) -> tuple[Path, str]:
    """A real store holding one pending run (written through srb's own Store), closed
    and checkpointed; returns the state folder and the run id."""
    state = tmp_path / "state"
    state.mkdir()

    async def make() -> str:
        async with await Store.open(state / "srb.sqlite3") as store:
            run = await store.runs.create_run(task_id="demo01", task_path="/nowhere",
                                              agent="untouched")
            return run.id

    run_id = asyncio.run(make())
    with contextlib.closing(sqlite3.connect(state / "srb.sqlite3")) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return state, run_id


def _digest(state: Path) -> str:
    """The database file's bytes (SQLite's own -wal/-shm come and go with connections)."""
    return hashlib.sha256((state / "srb.sqlite3").read_bytes()).hexdigest()


def _refused(state: Path, *args: str, fault: str) -> str:
    before = _digest(state)
    done = srb(state, *args, timeout=120)
    after = _digest(state)
    text = done.stderr + done.stdout
    ok = (done.returncode != 0 and "Traceback" not in text
          and str(state / "srb.sqlite3") in text and before == after)
    Outcome(fault, " ".join(args[:2]), "refused" if ok else "wrong",
            detail="" if ok else text[-500:]).record()
    assert done.returncode != 0, text
    assert "Traceback" not in text, text
    assert str(state / "srb.sqlite3") in text, text
    assert before == after, "the store file was changed"
    return text


def test_a_truncated_store_is_named_and_left_alone(tmp_path: Path) -> None:
    state, _ = _made_store(tmp_path)
    db = state / "srb.sqlite3"
    with db.open("r+b") as f:
        f.truncate(db.stat().st_size // 2)
    text = _refused(state, *REPO_CMD, fault="store-truncated")
    assert "not a usable srb database" in text or "cannot open" in text


def test_a_store_from_a_newer_srb_is_named_and_left_alone(tmp_path: Path) -> None:
    state, _ = _made_store(tmp_path)
    with contextlib.closing(sqlite3.connect(state / "srb.sqlite3")) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    text = _refused(state, *REPO_CMD, fault="store-newer")
    assert "newer than this srb" in text


_HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=1, isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
conn.close()
"""


@contextlib.contextmanager
def _write_lock_held(db: Path) -> Iterator[None]:
    """Another process holds ``db``'s write lock until the block ends. A process of its
    own: SQLite's locks are POSIX locks, which a process drops on every descriptor of the
    file when it closes any one of them (reading the file for its digest would free it)."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(db)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)


@pytest.mark.docker  # `srb runs cancel` opens the run service, which needs the engine
def test_a_locked_store_is_named_and_left_alone(tmp_path: Path) -> None:
    """Another process holds the write lock: a command that must write waits the busy
    timeout, then says the file is locked (and by whom it may be) instead of failing
    with a traceback."""
    state, run_id = _made_store(tmp_path)
    with _write_lock_held(state / "srb.sqlite3"):
        text = _refused(state, "runs", "cancel", run_id, fault="store-locked")
        assert "locked" in text
    assert srb(state, "runs", "cancel", run_id).returncode == 0  # free again: it works


@contextlib.contextmanager
def _read_only_mount(folder: Path) -> Iterator[None]:
    """Bind-mount ``folder`` onto itself read-only (root can write through chmod)."""
    try:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as err:
        pytest.skip(f"cannot bind-mount here (needs root and mount rights): {err}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True,
                       capture_output=True)
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=False, capture_output=True)


@pytest.mark.docker
def test_a_read_only_store_is_named_and_left_alone(tmp_path: Path) -> None:
    state, run_id = _made_store(tmp_path)
    with _read_only_mount(state):
        text = _refused(state, "runs", "cancel", run_id, fault="store-read-only")
    assert "read-only" in text or "readonly" in text or "cannot open" in text, text


@pytest.mark.docker
def test_a_second_srb_is_told_who_holds_the_run(tmp_path: Path) -> None:
    """srb A is frozen (SIGSTOP, alive) just after its run entered grading; srb B's
    ``eval`` (a re-grade), ``runs cancel`` and ``resume`` each name A's pid and host and
    leave the run alone. Once A is dead its lease no longer holds."""
    state = tmp_path / "state"
    a = subprocess.Popen(srb_argv(state, *run_argv(GRADING_AGENT)),
                         env=env({"SRB_FAULT_STOP_AT": "status:audit"}),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run_id = ""
    try:
        wait_for(lambda: Path(f"/proc/{a.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                 == "T", "srb A to stop at status:audit")
        run_id = only_run(state)
        who = f"pid {a.pid} on {socket.gethostname()}"
        for args in (("eval", run_id), ("runs", "cancel", run_id)):
            done = srb(state, *args)
            assert done.returncode != 0 and who in done.stderr, (args, done.stderr)
            assert "Traceback" not in done.stderr
        resumed = srb(state, "resume", "--json")
        assert resumed.returncode == 0, resumed.stderr
        assert [r["status"] for r in json.loads(resumed.stdout)["resumed"]] == ["audit"]
        assert run_row(state, run_id)["status"] == "audit"
        Outcome("second-srb", "eval+cancel+resume while driven", "resumed").record()
    finally:
        os.kill(a.pid, signal.SIGKILL)
        a.wait(timeout=30)
        # A is gone: its lease no longer holds, so cancel works and removes the containers
        done = srb(state, "runs", "cancel", run_id) if run_id else None
        remove_run_containers(run_id or "none")
    assert done is not None and done.returncode == 0, done
    assert run_row(state, run_id)["status"] == "cancelled"
