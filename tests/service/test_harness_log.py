"""srb's own lines in a run's log (stream ``srb``): the Log tab moved only while the agent
printed, and stood still through grading (issue 35 item 4). A graded run's log now carries
every status change, the stages' progress and ends, and the run's end, in order, after the
agent's own lines; each batch is announced as LogLines of role ``srb``."""

from __future__ import annotations

import pytest

from srb_tui.service.events import LogLines
from srb_tui.service.run.harness_log import HARNESS_ROLE
from srb_tui.service.run.orchestrator import RunService
from tests.conftest import DEMO_TASK
from tests.service.test_agent_phase import service  # noqa: F401 (the fixture)

pytestmark = pytest.mark.docker


async def test_a_graded_run_logs_what_srb_did_after_what_the_agent_printed(
        service: RunService) -> None:  # noqa: F811 (the imported fixture)
    run = await service.launch(DEMO_TASK.name, "untouched", budget_sec=120)
    announced: list[LogLines] = []
    async with service.bus.subscribe() as queue:
        done = await service.drive(run.id, grade=True)
        while not queue.empty():
            event = queue.get_nowait()
            if isinstance(event, LogLines) and event.run_id == run.id:
                announced.append(event)
    assert done.status == "scored"
    total = await service.store.logs.count_log_lines(run.id)
    rows = await service.store.logs.read_log_lines(run.id, 0, total)
    ours = [r.text for r in rows if r.stream == "srb"]
    assert await service.store.logs.count_log_lines(run.id, stream="srb") == len(ours)
    statuses = [t.removeprefix("status → ").split(" ")[0] for t in ours
                if t.startswith("status → ")]
    assert statuses[:3] == ["preparing", "agent", "collecting"]
    assert statuses[-1] == "scored"
    assert "audit" in statuses
    assert any(t.startswith("audit: ended ") for t in ours), ours
    assert ours[-1].startswith("run ended: scored · score 0"), ours[-1]
    # in the order things happened: the agent's lines sit between "agent" and "collecting"
    texts = [(r.stream, r.text) for r in rows]
    at_agent = texts.index(("srb", "status → agent"))
    at_collect = next(i for i, (s, t) in enumerate(texts)
                      if s == "srb" and t.startswith("status → collecting"))
    agent_lines = [i for i, (s, _t) in enumerate(texts) if s != "srb"]
    assert agent_lines and all(at_agent < i < at_collect for i in agent_lines)
    seqs = [r.seq for r in rows]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # every stored srb line was announced once, as the role the console tells apart
    said = [text for e in announced if e.role == HARNESS_ROLE for _ts, _s, text in e.lines]
    assert said == ours
