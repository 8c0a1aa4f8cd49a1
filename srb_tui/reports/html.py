"""A Report as one self-contained HTML page: every table, and the paper's figures as inline
SVG (no file, script or font fetched from anywhere; it opens offline and mails whole)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from srb_tui.reports.model import Cell, Report, Table, fmt

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em;
       color: #1b1b1b; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { padding: .2em .7em; border-bottom: 1px solid #ddd; }
thead th { border-bottom: 2px solid #333; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { border-top: 2px solid #333; font-weight: 600; }
p.note { color: #555; font-size: .9em; margin: .2em 0; }
figure { margin: 1.5em 0; } figure svg { max-width: 100%; height: auto; }
"""


def _cells(table: Table, row: Sequence[Cell]) -> list[str]:
    return [fmt(v, c.kind) for v, c in zip(row, table.columns, strict=True)]


def _table(table: Table) -> list[str]:
    numeric = [c.kind != "text" for c in table.columns]
    out = [f'<section id="{escape(table.id)}">', f"<h2>{escape(table.title)}</h2>", "<table>",
           "<thead><tr>" + "".join(
               f'<th class="{"n" if n else "t"}">{escape(c.title)}</th>'
               for c, n in zip(table.columns, numeric, strict=True)) + "</tr></thead>", "<tbody>"]
    rows = [("", r) for r in table.rows]
    if table.total is not None:
        rows.append(("total", table.total))
    for css, row in rows:
        cells = "".join(f'<td class="{"n" if n else "t"}">{escape(v)}</td>'
                        for v, n in zip(_cells(table, row), numeric, strict=True))
        out.append(f'<tr class="{css}">{cells}</tr>' if css else f"<tr>{cells}</tr>")
    out += ["</tbody>", "</table>"]
    out += [f'<p class="note">{escape(note)}</p>' for note in table.notes]
    out.append("</section>")
    return out


def to_html(report: Report, only: Sequence[str] | None = None) -> str:
    """The page: title, counts, the figures (inline SVG), then every table."""
    from srb_tui.reports.plots import FIGURE_IDS, figure_svgs

    tables = report.tables if not only else [report.table(t) for t in only]
    c = report.counts
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{escape(report.title)}</title>", f"<style>{STYLE}</style>", "</head>",
           "<body>", f"<h1>{escape(report.title)}</h1>",
           f"<p>Selection: {escape(report.selection)}. {c.get('runs', 0)} runs: "
           f"{c.get('counted', 0)} counted, {c.get('invalid', 0)} invalid (excluded), "
           f"{c.get('cancelled', 0)} cancelled, {c.get('unfinished', 0)} unfinished; "
           f"{c.get('imported', 0)} imported.</p>",
           *(f'<p class="note">{escape(note)}</p>' for note in report.notes)]
    present = {t.id for t in report.tables}
    wanted = [f for f in FIGURE_IDS if f in present and (not only or f in only)]
    if wanted:
        svgs = figure_svgs(report)
        out.append('<section id="figures"><h2>Figures</h2>')
        for figure_id in wanted:
            out.append(f'<figure id="fig-{figure_id}">{svgs[figure_id]}</figure>')
        out.append("</section>")
    for table in tables:
        out += _table(table)
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"
