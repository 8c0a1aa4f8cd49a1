"""Issue 38 item 6: a campaign with grading off (``Scheduler(grade=False)``), run by the
scheduler for real (the demo task, ``command:true``, the Docker engine), stopped half-way
and resumed: every cell ends done after one attempt, each cell has its own run, and the
resume started no run for a cell the first pass finished (bench/bench_campaign_cells.py
at its smallest setting)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_campaign_cells

pytestmark = [pytest.mark.docker]


async def test_stopped_and_resumed_ungraded_campaign_redoes_no_cell() -> None:
    figures = await bench_campaign_cells.measure(4)
    assert figures.done_first >= 2  # the first pass stopped once half were done
    assert figures.done_first + figures.in_flight < 4  # ... and left cells to the resume
    assert figures.runs == 4 and figures.attempts == 4
    assert figures.srb_cell > 0 and figures.docker_cell > 0
