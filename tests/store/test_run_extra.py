"""The typed records of ``runs.extra`` (``store/run_extra.py``, ``store/run_extra_more.py``):
each reads back what it writes, reads old or partial documents leniently, and no module
outside ``store/run_extra.py`` picks the lifecycle's keys out of the raw document."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from srb_tui.store import Store
from srb_tui.store.run_extra import (
    AGENT_EXIT,
    AGENT_LOOP,
    BUDGET,
    CLIENT,
    COLLECT,
    IMPORTED,
    LEASE,
    AgentBudget,
    AgentExit,
    AgentLoop,
    ClientRecord,
    Collected,
    DriverLease,
    read_adversary_budget,
    read_client_version,
)
from srb_tui.store.run_extra_more import CampaignCell, ImageBuild, ImportedFrom, StageGrading

RECORDS = [
    (LEASE, DriverLease(4242, "host-a", "2026-12-02T18:00:00Z")),
    (BUDGET, AgentBudget(1.5, 20000)),
    (CLIENT, ClientRecord("claude-code", "2.1.220", "srb", "ab" * 32, "/opt/client", "1000:1000",
                          "http://127.0.0.1:4000/anthropic", "http://127.0.0.1:4000/openai")),
    (AGENT_EXIT, AgentExit(12.5, 0, "exited", detail="done", stop_detail="token seen")),
    (AGENT_EXIT, AgentExit(None, None, "deadline", escalated_to_kill=True)),
    (AGENT_LOOP, AgentLoop("completed", None, 3, {"calls": 7}, {"cost_usd": 0.25})),
    (COLLECT, Collected(0.4, 12, 3456, 2, 8192, (("a/../b", "leaves the tree"),), 1, None)),
    (IMPORTED, ImportedFrom("jobs/2026-01-01__12-00-00")),
    (IMPORTED, ImportedFrom(None)),
]


@pytest.mark.parametrize(("key", "record"), RECORDS,
                         ids=[f"{k}-{i}" for i, (k, _) in enumerate(RECORDS)])
def test_a_record_reads_back_what_it_wrote(key: str, record: object) -> None:
    doc = {key: record.to_json()}  # type: ignore[attr-defined]
    assert type(record).read(doc) == record  # type: ignore[attr-defined]


async def test_records_survive_the_store(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "srb.sqlite3")
    try:
        run = await store.runs.create_run(task_id="t", task_path="/t", agent="replay:x",
                                          model=None, effort=None, budget_sec=60.0)
        for key, record in RECORDS:
            await store.runs.merge_extra(run.id, {key: record.to_json()})  # type: ignore[attr-defined]
            back = await store.runs.require_run(run.id)
            assert type(record).read(back.extra) == record  # type: ignore[attr-defined]
    finally:
        await store.close()


def test_old_or_partial_documents_read_leniently() -> None:
    assert AgentExit.read({}) is None
    assert AgentExit.read({AGENT_EXIT: "not a table"}) is None
    assert AgentExit.read({AGENT_EXIT: {"reason": "exited", "exit_code": True}}).exit_code is None
    assert ClientRecord.read({CLIENT: {"name": "codex"}}) is None  # no version: no record
    assert ClientRecord.read({CLIENT: {"name": "codex", "version": "0.146.0"}}).user == "1000:1000"
    assert AgentBudget.read({}) == AgentBudget(None, None)
    assert DriverLease.read({LEASE: {"pid": "12"}}) is None
    assert read_adversary_budget({"adversary_budget_sec": 30}) == 30.0
    assert read_adversary_budget({"adversary_budget_sec": False}) is None
    assert read_client_version({"client_version": 2}) is None


RAW_READ = re.compile(r"""extra(?:\.get\(|\[)\s*["'](driver|budget|client|client_version|"""
                      r"""agent_exit|agent_loop|collect|adversary_budget_sec)["']""")


def test_no_module_reads_the_lifecycle_keys_raw() -> None:
    root = Path(__file__).resolve().parents[2] / "srb_tui"
    found = [f"{p.relative_to(root)}:{n}" for p in root.rglob("*.py")
             if p.name != "run_extra.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if RAW_READ.search(line)]
    assert found == []


def test_campaign_keys_read_back_and_leave_no_ceiling_unless_given() -> None:
    assert CampaignCell.read(CampaignCell("c1", 2.5).to_json()) == CampaignCell("c1", 2.5)
    assert CampaignCell("c1").to_json() == {"campaign": "c1"}
    assert CampaignCell.read({"campaign": "c1"}) == CampaignCell("c1", None)
    assert CampaignCell.read({"max_cost_usd": 2.5}) is None


def test_stage_tables_read_per_role() -> None:
    build = ImageBuild("srb-stage:abc", {"INFRA_IMAGE": "infra:1"}, (("a:1", "b:1"),))
    extra = {"image_builds": {"behavioural": build.to_json(), "audit": "not a table"},
             "grading": {"behavioural": {
                 "uid": 0, "modules_as_root": True, "declared_by": "task.toml [verifier].user",
                 "submission_launcher_uid": "slot", "memory_mb": 8192, "cpus": 2,
                 "pids": 4096, "capabilities": ["SETUID", "KILL"], "network": "none",
                 "no_new_privileges": True, "boundary_given_up": [],
                 "suite_tampering": [{"module": "m", "changed": ["t.py"]}]}}}
    assert ImageBuild.read_all(extra) == {"behavioural": build}
    grading = StageGrading.read_all(extra)["behavioural"]
    assert (grading.modules_as_root, grading.declared_by, grading.memory_mb) == (
        True, "task.toml [verifier].user", 8192)
    assert grading.capabilities == ("SETUID", "KILL") and grading.cpus == 2.0
    assert grading.boundary_given_up == () and grading.suite_tampering[0]["module"] == "m"
    assert StageGrading.read_all({}) == {} and ImageBuild.read_all({"image_builds": 3}) == {}
