"""Run ids that can be read and used (issue 26, 6): a unique prefix wherever a run id is
taken (an ambiguous one is a usage error naming the candidates), ``-q`` for ids only,
whole ids in plain columns when stdout is a pipe or with ``--no-trunc``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from srb_tui.commands import exit_codes as codes
from srb_tui.store import Store
from tests.cli.test_cli import srb

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, str, str]:
    state = tmp_path / "state"

    async def make() -> list[str]:
        async with await Store.open(state / "srb.sqlite3") as store:
            return [(await store.runs.create_run(task_id="demo-with-a-long-name",
                                                 task_path="tasks/demo", agent="untouched")).id
                    for _ in range(2)]

    first, second = asyncio.run(make())
    return state, first, second


def _common(first: str, second: str) -> int:
    return next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)


def test_piped_runs_list_prints_whole_ids_in_plain_columns(
    two_runs: tuple[Path, str, str],
) -> None:
    state, first, second = two_runs
    out = srb("runs", "list", state=state)  # stdout is a pipe here
    assert out.returncode == codes.OK, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:3] == ["RUN", "TASK", "AGENT"]
    assert {line.split()[0] for line in lines[1:]} == {first, second}
    assert "…" not in out.stdout and "━" not in out.stdout
    assert srb("runs", "list", "--no-trunc", state=state).stdout == out.stdout


def test_quiet_prints_only_the_ids(two_runs: tuple[Path, str, str]) -> None:
    state, first, second = two_runs
    out = srb("runs", "list", "-q", state=state)
    assert out.returncode == codes.OK
    assert sorted(out.stdout.split()) == sorted([first, second])
    assert srb("runs", "list", "-q", "--limit", "1", state=state).stdout.count("\n") == 1


@pytest.mark.parametrize("command", [("runs", "cancel"), ("runs", "show"), ("eval",)])
def test_a_unique_prefix_is_taken_and_an_ambiguous_one_names_the_candidates(
    command: tuple[str, ...], two_runs: tuple[Path, str, str],
) -> None:
    state, first, second = two_runs
    common = _common(first, second)
    ambiguous = srb(*command, first[:common], state=state, env=NO_ENGINE)
    assert "Traceback" not in ambiguous.stderr
    assert ambiguous.returncode == codes.USAGE, ambiguous.stderr
    assert first in ambiguous.stderr and second in ambiguous.stderr
    unique = srb(*command, first[: common + 1], state=state, env=NO_ENGINE)
    assert "Traceback" not in unique.stderr
    assert f"no run {first[: common + 1]!r}" not in unique.stderr  # the prefix was found
    if command == ("runs", "show"):
        assert unique.returncode == codes.OK and first in unique.stdout
    elif command == ("eval",):  # found, then: its task is not under the task roots
        assert unique.returncode == codes.NOT_FOUND, unique.stderr
        assert f"(run {first})" in unique.stderr, unique.stderr


def test_an_80_column_terminal_shows_whole_ids(two_runs: tuple[Path, str, str]) -> None:
    """On a terminal (a real pty) 80 columns wide the Rich table cuts other columns, never
    the run id."""
    import os
    import subprocess
    import sys

    state, first, second = two_runs
    main, child = os.openpty()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SRB_")},
           "COLUMNS": "80", "LINES": "24", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "srb_tui", "--state", str(state), "runs",
                           "list"], stdout=child, stderr=subprocess.PIPE, env=env, timeout=60)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the pty's other end is closed: all read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    screen = b"".join(chunks).decode(errors="replace")
    assert done.returncode == codes.OK, done.stderr
    assert "┏" in screen  # the table, not the plain columns
    assert first in screen and second in screen, screen


def test_text_runs_show_gives_the_spend_of_each_role(tmp_path: Path) -> None:
    """Issue 35 item 14: the text `runs show` printed no cost when the agent had no client
    rounds, although the ledger held the reviewer's and the verifiers' calls; it shows the
    gateway ledger's spend by role whenever there is any."""
    import asyncio

    from srb_tui.store import Store

    state = tmp_path / "state"
    state.mkdir()

    async def seed() -> str:
        async with await Store.open(state / "srb.sqlite3") as store:
            run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="replay")
            for role, cost, tokens in (("reviewer", 0.25, 1500), ("adversary", 1.5, 42_000),
                                       ("adversary", 0.5, 8_000)):
                await store.ledger.add_ledger_row(run.id, role, round=None, route="anthropic",
                                                  model="m", upstream_model="m", status=200,
                                                  latency_ms=5.0, usage={"input_tokens": tokens},
                                                  cost_usd=cost)
            return run.id

    run_id = asyncio.run(seed())
    out = srb("runs", "show", run_id, state=state)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if "spend (gateway ledger)" in x)
    assert "reviewer $0.25 · 2k tok" in line and "adversary $2.00 · 50k tok" in line, line
    assert "agent" not in line.split(":", 1)[1], line  # no agent calls, no agent entry
