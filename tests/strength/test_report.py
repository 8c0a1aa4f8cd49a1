"""``srb report --strength`` on a made-up campaign (issue 36): the tables carry the figures
counted by hand, every format renders them, and the two figures show the table's numbers
(read back from the drawn bars and lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from srb_tui.reports import render
from srb_tui.reports.plots import write_figures
from srb_tui.reports.strength import CampaignStrength, strength_report
from srb_tui.store.strength_records import EquivalentMark, MutantRow, StrengthCampaign
from srb_tui.strength.scores import MutantOutcome, figures

PANEL = ("a1", "a2", "a3")


def _row(mid: str, stage_ii: str, catches: dict[str, str] | None = None,
         equivalent: bool = False) -> MutantRow:
    doc: dict[str, Any] = {"before": "<", "after": "<=", "diff": ""}
    return MutantRow("s-x", mid, f"k{mid}", int(mid[1:]), "src/x.py", int(mid[1:]),
                     "comparison", doc, stage_ii, {"reason": "made up"},
                     "r-20261206-010101-aaaa" if catches else None, catches is not None,
                     catches or {}, EquivalentMark("t", f"k{mid}", "me", "same", "now")
                     if equivalent else None)


def _item() -> CampaignStrength:
    rows = [_row("m001", "killed"), _row("m002", "killed"), _row("m003", "invalid"),
            _row("m004", "survived", {"a1": "broken", "a2": "survived", "a3": "broken"}),
            _row("m005", "survived", {"a1": "survived", "a2": "survived", "a3": "broken"}),
            _row("m006", "survived", {n: "survived" for n in PANEL}),
            _row("m007", "survived", {n: "survived" for n in PANEL}, equivalent=True)]
    outcomes = [MutantOutcome(r.mutant_id, r.stage_ii or "", frozenset(
        a for a, o in r.catches.items() if o == "broken") if r.stage_iii_done else None,
        r.equivalent is not None) for r in rows]
    campaign = StrengthCampaign("s-x", "t", "/t", "state-a", 7, 1, PANEL, 30.0, "done",
                                "then", "now")
    return CampaignStrength(campaign, figures(outcomes, PANEL), rows)


def test_the_tables_carry_the_figures_counted_by_hand() -> None:
    report = strength_report([_item()], selection="made up")
    summary = report.table("strength")
    # valid = 7 - 1 invalid - 1 equivalent = 5; killed 2; survivors 3 graded, 2 caught
    assert summary.rows == [["s-x", "t", 7, 1, 1, 5, 2, 40.0, 3, 3, 2, 66.7]]
    adversaries = report.table("strength-adversaries")
    assert [r[0::1] for r in adversaries.rows] == [
        ["a1", "s-x", 1, 3, 33.3, 0], ["a2", "s-x", 0, 3, 0.0, 0],
        ["a3", "s-x", 2, 3, 66.7, 1]]
    retire = report.table("strength-retire")
    # retire a3 (the strongest): m004 still caught by a1 -> 2 let through; then a1 too -> 3
    assert [(r[0], r[2], r[3], r[4]) for r in retire.rows] == [
        (0, 1, 1, 1), (1, 2, 1, 2), (2, 3, 1, 3), (3, 3, 3, 3)]
    survivors = report.table("strength-survivors")
    assert [r[0] for r in survivors.rows] == ["m006", "m004", "m005", "m007"]
    assert survivors.rows[3][6] == "me: same" and survivors.rows[1][5] == "a1, a3"


@pytest.mark.parametrize("fmt", ["md", "csv", "json", "latex", "html"])
def test_every_format_renders_the_strength_tables(fmt: str) -> None:
    text = render(strength_report([_item()], selection="made up"), fmt)
    assert "s-x" in text and "a3" in text
    if fmt == "json":
        doc = json.loads(text)
        assert [t["id"] for t in doc["tables"]][:2] == ["strength", "strength-adversaries"]
    if fmt == "html":
        assert text.count("<figure") == 2 and "1 strength campaigns, 7 mutants." in text


def test_the_figures_show_the_table_numbers(tmp_path: Path) -> None:
    written = write_figures(strength_report([_item()], selection="made up"), tmp_path)
    assert sorted(p.name for p in written if p.suffix == ".json") == [
        "strength-catch-rate.json", "strength-retire-k.json"]
    rates = json.loads((tmp_path / "strength-catch-rate.json").read_text())
    assert rates["series"][0]["values"] == [33.3, 0.0, 66.7]
    assert rates["categories"] == ["a1", "a2", "a3"]
    retire = json.loads((tmp_path / "strength-retire-k.json").read_text())
    assert retire["title"].startswith("Instrument strength · retire-k curve")
