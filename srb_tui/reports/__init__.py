"""The paper's tables and figures from the store, and their exports.

``load_runs(store, …)`` reads the selected runs in one pass into plain ``ReportRun``
records; ``build_report(runs)`` computes every table (pure); ``render(report, fmt)`` exports
it as Markdown, CSV, JSON or LaTeX. Per-run spend comes from the gateway's ledger by role
(``store.report_rows.spend_by_role``): the agent's, the reviewer's and the verifiers'.
"""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

if TYPE_CHECKING:
    from srb_tui.reports.build import TABLE_IDS, build_report, load_runs
    from srb_tui.reports.export import FORMATS, render
    from srb_tui.reports.model import Column, Report, Table
    from srb_tui.reports.records import OUTCOMES, GateSummary, ReportRun, Round

__all__ = [
    "FORMATS",
    "OUTCOMES",
    "TABLE_IDS",
    "Column",
    "GateSummary",
    "Report",
    "ReportRun",
    "Round",
    "Table",
    "build_report",
    "load_runs",
    "render",
]

__getattr__ = exports_on_first_use(__name__)
