"""A Report as Markdown, CSV, JSON, LaTeX (booktabs) or one self-contained HTML page
(``reports.html``: the tables and the paper's figures as inline SVG).

CSV puts every table in one file: a ``# id: title`` line, the header, the rows, the total
row, the table's notes as ``# note: …`` lines (Table 3i's interval method and resample
count among them), a blank line. JSON is the report's ``to_json()``. LaTeX gives one ``table``
environment per table with ``\\toprule``/``\\midrule``/``\\bottomrule`` (needs
``\\usepackage{booktabs}``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from srb_tui.reports.model import Cell, Report, Table, counts_line, fmt

FORMATS = ("md", "csv", "json", "latex", "html")


def _tables(report: Report, only: Sequence[str] | None) -> list[Table]:
    if not only:
        return report.tables
    return [report.table(t) for t in only]


def _cells(table: Table, row: Sequence[Cell]) -> list[str]:
    return [fmt(v, c.kind) for v, c in zip(row, table.columns, strict=True)]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(report: Report, only: Sequence[str] | None = None) -> str:
    lines = [f"# {report.title}", "", f"Selection: {report.selection}", ""]
    lines.append(counts_line(report.counts))
    for note in report.notes:
        lines += ["", f"*{note}*"]
    for table in _tables(report, only):
        lines += ["", f"## {table.title}", ""]
        right = [c.kind != "text" for c in table.columns]
        lines.append("| " + " | ".join(_md_escape(c.title) for c in table.columns) + " |")
        lines.append("|" + "|".join("---:" if r else "---" for r in right) + "|")
        rows = [_cells(table, row) for row in table.rows]
        if table.total is not None:
            rows.append([f"**{v}**" if v else v for v in _cells(table, table.total)])
        if not rows:
            lines.append("| " + " | ".join("—" for _ in table.columns) + " |")
        for row in rows:
            lines.append("| " + " | ".join(_md_escape(v) for v in row) + " |")
        for note in table.notes:
            lines += ["", f"*{note}*"]
    return "\n".join(lines) + "\n"


def to_csv(report: Report, only: Sequence[str] | None = None) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for note in report.notes:
        writer.writerow([f"# note: {note}"])
    for table in _tables(report, only):
        writer.writerow([f"# {table.id}: {table.title}"])
        writer.writerow([c.title for c in table.columns])
        for row in [*table.rows, *([table.total] if table.total is not None else [])]:
            writer.writerow(["" if v is None else v for v in row])
        for note in table.notes:
            writer.writerow([f"# note: {note}"])
        writer.writerow([])
    return buffer.getvalue()


def to_json(report: Report, only: Sequence[str] | None = None) -> str:
    doc = report.to_json()
    if only:
        doc["tables"] = [t.to_json() for t in _tables(report, only)]
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "—": "---", "≥": r"$\geq$", "·": r"\textperiodcentered{}", "κ": r"$\kappa$",
    "×": r"$\times$", "−": "--",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def to_latex(report: Report, only: Sequence[str] | None = None) -> str:
    out = [f"% {latex_escape(report.title)} -- {latex_escape(report.selection)}",
           "% requires \\usepackage{booktabs}",
           *(f"% {latex_escape(note)}" for note in report.notes)]
    for table in _tables(report, only):
        spec = "".join("r" if c.kind != "text" else "l" for c in table.columns)
        out += ["", "\\begin{table}[t]", "\\centering",
                f"\\caption{{{latex_escape(table.title)}}}",
                f"\\label{{tab:srb-{table.id.replace('_', '-')}}}",
                f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
                " & ".join(latex_escape(c.title) for c in table.columns) + " \\\\",
                "\\midrule"]
        for row in table.rows:
            out.append(" & ".join(latex_escape(v) for v in _cells(table, row)) + " \\\\")
        if table.total is not None:
            out.append("\\midrule")
            out.append(" & ".join(latex_escape(v) for v in _cells(table, table.total)) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}"]
        if table.notes:
            out.append("\\par\\smallskip{\\footnotesize "
                       + " ".join(latex_escape(n) for n in table.notes) + "}")
        out.append("\\end{table}")
    return "\n".join(out) + "\n"


def render(report: Report, fmt_name: str, only: Sequence[str] | None = None) -> str:
    """``report`` in one of FORMATS."""
    if fmt_name == "md":
        return to_markdown(report, only)
    if fmt_name == "csv":
        return to_csv(report, only)
    if fmt_name == "json":
        return to_json(report, only)
    if fmt_name == "latex":
        return to_latex(report, only)
    if fmt_name == "html":
        from srb_tui.reports.html import to_html  # draws the figures: matplotlib

        return to_html(report, only)
    raise ValueError(f"unknown format {fmt_name!r}; choose from {', '.join(FORMATS)}")
