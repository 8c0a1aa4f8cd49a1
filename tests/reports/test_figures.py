"""``srb report --figures DIR`` and ``--format html`` over the synthetic store of
test_tables (known outcomes): every figure is written as PDF and PNG, both open, and the
numbers read back from each figure's drawn artists (its saved ID.json) are the report's."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from srb_tui.cli import main
from srb_tui.reports.plots import FIGURE_IDS, FILE_STEMS
from srb_tui.store import Store

from .test_tables import _populate


@pytest.fixture
def state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()

    async def fill() -> None:
        async with await Store.open(state / "srb.sqlite3") as store:
            await _populate(store)

    asyncio.run(fill())
    return state


def _report(state: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    assert main(["--state", str(state), "report", "--json", *extra]) == 0
    doc = json.loads(capsys.readouterr().out)
    return {t["id"]: t for t in doc["tables"]}


def test_figures_show_the_report_numbers(state: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "figs"
    tables = _report(state, capsys, "--figures", str(out))
    paper = {fid: FILE_STEMS[fid] for fid in FIGURE_IDS}
    # a report of runs draws the paper's figures, never a strength report's
    assert sorted(p.stem for p in out.glob("*.pdf")) == sorted(paper.values())
    for figure_id, stem in paper.items():
        pdf, png = out / f"{stem}.pdf", out / f"{stem}.png"
        assert pdf.read_bytes().startswith(b"%PDF-"), figure_id
        assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), figure_id
        width, height = (int.from_bytes(png.read_bytes()[16:20], "big"),
                         int.from_bytes(png.read_bytes()[20:24], "big"))
        assert width >= 1800 and height >= 800  # 6.8 in at 300 dpi
    data = {fid: json.loads((out / f"{stem}.json").read_text())
            for fid, stem in paper.items()}

    five_a = data["figure5a"]
    assert five_a["title"].startswith("Figure 5a")
    assert five_a["ylabel"] == "Migrated runs (%)"
    assert five_a["categories"] == [r["level"] for r in tables["figure5a"]["rows"]]
    assert five_a["series"][0]["values"] == pytest.approx(
        [r["share"] for r in tables["figure5a"]["rows"]])

    five_b = data["figure5b"]
    assert five_b["categories"] == [str(r["survivors"]) for r in tables["figure5b"]["rows"]]
    assert five_b["series"][0]["values"] == [r["runs"] for r in tables["figure5b"]["rows"]]
    assert five_b["series"][0]["values"][6] == 1  # run #1 survived all six

    six = data["figure6"]
    rows = tables["figure6"]["rows"]
    assert six["series"][0]["values"] == pytest.approx([r["rate"] for r in rows])
    assert [c.split("\n")[0] for c in six["categories"]] == [r["slot"] for r in rows]
    assert six["legend"] == ["opus", "sonnet", "gpt"]  # coloured by the model behind it
    assert "33.3%" in six["annotations"]

    funnel = data["table2"]
    configs = [r["config"] for r in tables["table2"]["rows"]]
    assert funnel["categories"] == configs
    assert [s["label"] for s in funnel["series"]] == [
        "Stage I fail", "Blindness", "Stage II fail", "Counterexample", "Accepted"]
    keys = ("audit_fail", "blindness", "behavioural_fail", "counterexample", "accepted")
    for series, key in zip(funnel["series"], keys, strict=True):
        assert series["values"] == [r[key] for r in tables["table2"]["rows"]], key
    # replay:a: one run of each of the five outcomes
    assert [s["values"][configs.index("replay:a")] for s in funnel["series"]] == [1] * 5


def test_html_is_one_self_contained_page(state: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    tables = _report(state, capsys)
    page = tmp_path / "report.html"
    assert main(["--state", str(state), "report", "--format", "html", "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing fetched
    assert html.count("<svg") == 4 and html.count('<figure id="fig-') == 4
    for table_id, table in tables.items():
        assert f'<section id="{table_id}">' in html
        assert table["title"].replace("&", "&amp;") in html
    funnel = html[html.index('<section id="table2">'):]
    row = funnel[funnel.index("<td class=\"t\">replay:a</td>"):].split("</tr>")[0]
    assert re.findall(r'<td class="n">([^<]*)</td>', row)[:6] == ["1", "1", "1", "1", "1", "5"]


def test_figures_without_matplotlib_say_so_once_and_exit_usage(tmp_path: Path) -> None:
    """Issue 35 item 12: without the figures extra `srb report --figures` gives one message
    naming the extra and exits 2 (it used to say it twice and exit 4, "could not measure").
    matplotlib is hidden by a package of that name that cannot be imported."""
    from tests.cli.test_cli import srb
    from tests.reports.test_import import _job

    state = tmp_path / "state"
    assert srb("import", str(_job(tmp_path / "jobs")), state=state).returncode == 0
    hidden = tmp_path / "hide"
    (hidden / "matplotlib").mkdir(parents=True)
    (hidden / "matplotlib" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'matplotlib'\")\n")
    out = srb("report", "--figures", str(tmp_path / "figs"), state=state,
              env={"PYTHONPATH": str(hidden)})
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("matplotlib") == 1 and "'.[figures]'" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_funnel_rows_say_a_shared_origin_once_and_counts_are_whole() -> None:
    """Issue 35, figures: every Table 2 row repeated "imported:harbor ·", and count axes
    had fractional ticks (0.25 runs); titles give n."""
    from srb_tui.reports.model import Column, Report, Table
    from srb_tui.reports.plots import _common_prefix, _draw, figure_data

    assert _common_prefix(["imported:harbor · opus", "imported:harbor · gpt"]) == (
        "imported:harbor · ")
    assert _common_prefix(["replay:a", "replay:b"]) == ""
    keys = ("config", "audit_fail", "blindness", "behavioural_fail", "counterexample", "accepted")
    table = Table("table2", "Table 2", [Column(k, k) for k in keys],
                  rows=[["imported:harbor · opus", 1, 0, 0, 1, 1],
                        ["imported:harbor · gpt", 0, 1, 0, 0, 0]])
    fig = _draw(Report(title="t", selection="all runs", tables=[table]), "table2")
    data = figure_data(fig)
    assert data["categories"] == ["opus", "gpt"]
    assert data["title"].endswith("(n = 4 runs)")
    assert "every configuration: imported:harbor" in data["annotations"]
    ticks = [t for t in fig.axes[0].get_xticks() if t >= 0]
    assert all(float(t).is_integer() for t in ticks), ticks
