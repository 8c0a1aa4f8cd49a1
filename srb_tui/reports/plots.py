"""The paper's figures drawn with matplotlib from a Report's tables: Figure 5a (how far
migrated runs get on the fixed suite), Figure 5b (verifiers that found no counterexample),
Figure 6 (break rate per verifier, coloured by model, annotated with effort) and Table 2's
funnel as stacked bars per configuration; for a strength report (issue 36), the catch rate
per adversary and the retire-k curve.

``write_figures(report, folder)`` saves each as PDF and PNG plus ``ID.json``: the numbers
read back from the drawn artists (bar labels and heights, the series, title and axis
labels), so a test or a reader can check a figure shows what the report says.
``figure_svgs(report)`` gives the same figures as inline SVG for the HTML page.

matplotlib is the ``figures`` extra (``pip install 'srb-tui[figures]'``); it is imported
here only, when a figure is asked for, with the non-interactive Agg backend.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srb_tui.reports.figure_fonts import figure_families
from srb_tui.reports.model import Report, Table

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FIGURE_IDS = ("figure5a", "figure5b", "figure6", "table2")
STRENGTH_FIGURE_IDS = ("strength-adversaries", "strength-retire")
FILE_STEMS = {"figure5a": "figure5a-fixed-suite", "figure5b": "figure5b-survivors",
              "figure6": "figure6-verifiers", "table2": "table2-funnel",
              "strength-adversaries": "strength-catch-rate",
              "strength-retire": "strength-retire-k"}


def figure_ids(report: Report) -> tuple[str, ...]:
    """The figures ``report`` has tables for: the paper's, or a strength report's."""
    have = {t.id for t in report.tables}
    return tuple(f for f in (*FIGURE_IDS, *STRENGTH_FIGURE_IDS) if f in have)
# Stage colours of Table 2 (Stage I, II, III, accepted) — the paper's legend order.
FUNNEL = (("audit_fail", "Stage I fail", "#c0504d"), ("blindness", "Blindness", "#e6a09e"),
          ("behavioural_fail", "Stage II fail", "#e8a33d"),
          ("counterexample", "Counterexample", "#4f81bd"), ("accepted", "Accepted", "#2e7d32"))
FAMILY_COLOURS = {"anthropic": "#d97757", "openai": "#10a37f", "google": "#4285f4"}
OTHER_COLOURS = ("#7a5195", "#ef5675", "#ffa600", "#003f5c", "#58508d", "#bc5090")


class FiguresUnavailable(ImportError):
    """matplotlib is not installed (the ``figures`` extra)."""


@functools.cache  # pyplot styled once a process: write_figures draws inside its own font.family
def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - the dev install has it
        raise FiguresUnavailable(
            "figures need matplotlib, the figures extra: pip install -e '.[figures]' "
            "(the README's install brings it)"
        ) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.family": "DejaVu Sans", "font.size": 9,
                         "axes.spines.top": False, "axes.spines.right": False,
                         "svg.fonttype": "none", "pdf.fonttype": 42})
    return plt


def _num(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _labels(ax: Axes, bars: Any, texts: list[str]) -> None:
    for bar, text in zip(bars, texts, strict=True):
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                    fontsize=7)


def _whole(axis: Any) -> None:
    """Whole-number ticks on a count axis (no 0.25 runs)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _common_prefix(labels: list[str]) -> str:
    """The leading words (up to a `` · ``) every label shares, when they are several:
    rows that all read "imported:harbor · …" say it once, above the bars."""
    if len(labels) < 2:
        return ""
    first = labels[0]
    cut = 0
    for i, ch in enumerate(first):
        if any(len(lab) <= i or lab[i] != ch for lab in labels):
            break
        if first[i:i + 3] == " · " and all(lab[i:i + 3] == " · " for lab in labels):
            cut = i + 3
    return first[:cut]


def _empty(ax: Axes) -> None:
    ax.text(0.5, 0.5, "no runs in this selection", transform=ax.transAxes, ha="center",
            va="center", color="#777777")


def _levels(ax: Axes, table: Table) -> None:
    labels = [str(v) for v in table.column("level")]
    shares = [_num(v) for v in table.column("share")]
    bars = ax.bar(labels, shares, color="#4f81bd", label="migrated runs")
    _labels(ax, bars, [f"{s:.1f}%" for s in shares])
    ax.set_xlabel("Fixed checks passed")
    ax.set_ylabel("Migrated runs (%)")
    ax.set_ylim(0, 105)
    if not any(table.column("runs")):
        _empty(ax)


def _survivors(ax: Axes, table: Table) -> None:
    labels = [str(v) for v in table.column("survivors")]
    runs = [_num(v) for v in table.column("runs")]
    colours = ["#4f81bd"] * len(runs)
    if colours:
        colours[-1] = "#2e7d32"  # only the rightmost bar is accepted
    bars = ax.bar(labels, runs, color=colours, label="Stage III entrants")
    _labels(ax, bars, [f"{int(r)}" for r in runs])
    ax.set_xlabel("Verifiers that found no counterexample")
    ax.set_ylabel("Runs")
    _whole(ax.yaxis)
    if not any(runs):
        _empty(ax)


def _family(model: str) -> str | None:
    from srb_tui.grader.contract import model_family

    return model_family(model)


def _verifiers(ax: Axes, table: Table) -> None:
    labels = [str(v) for v in table.column("slot")]
    models = [str(v or "") for v in table.column("model")]
    efforts = [str(v or "") for v in table.column("effort")]
    rates = [_num(v) for v in table.column("rate")]
    palette: dict[str, str] = {}
    for model in models:
        if model not in palette:
            family = _family(model) or ""
            taken = set(palette.values())
            colour = FAMILY_COLOURS.get(family)
            if colour is None or colour in taken:
                colour = next(c for c in (*OTHER_COLOURS, "#999999") if c not in taken)
            palette[model] = colour
    ticks = [f"{slot}\n{effort}" if effort else slot for slot, effort in zip(labels, efforts,
                                                                               strict=True)]
    bars = ax.bar(range(len(rates)), rates, color=[palette[m] for m in models],
                  label="break rate")
    ax.set_xticks(range(len(rates)), ticks)
    _labels(ax, bars, [f"{r:.1f}%" for r in rates])
    opus = [r for r, m in zip(rates, models, strict=True) if "opus" in m]
    if opus:
        ax.axhline(min(opus), linestyle="--", linewidth=0.8, color="#555555")
    ax.set_xlabel("Verifier slot (its effort below it)" if any(efforts) else "Verifier slot")
    ax.set_ylabel("Break rate (% of its rounds)")
    ax.set_ylim(0, max([*rates, 10.0]) * 1.15)
    if palette:
        from matplotlib.patches import Patch

        # Beside the axes, not over the reference line and the first bar.
        ax.legend(handles=[Patch(color=c, label=m or "—") for m, c in palette.items()],
                  frameon=False, fontsize=7, title="Model", title_fontsize=7,
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        _empty(ax)


def _funnel(ax: Axes, table: Table) -> None:
    configs = [str(v) for v in table.column("config")]
    shared = _common_prefix(configs)
    if shared:  # said once, under the title, not on every row
        configs = [c[len(shared):] for c in configs]
        ax.text(0.0, 1.01, f"every configuration: {shared.rstrip(' ·:')}", fontsize=7,
                color="#555555", transform=ax.transAxes, va="bottom")
    left = [0.0] * len(configs)
    for key, label, colour in FUNNEL:
        values = [_num(v) for v in table.column(key)]
        ax.barh(configs, values, left=left, color=colour, label=label)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.invert_yaxis()  # the table's first row on top
    ax.set_xlabel("Runs")
    ax.set_ylabel("Configuration")
    _whole(ax.xaxis)
    ax.figure.legend(frameon=False, fontsize=7, ncols=5, loc="outside lower center")
    if not configs:
        _empty(ax)


def _campaigns(table: Table) -> list[str]:
    return list(dict.fromkeys(str(v) for v in table.column("campaign")))


def _catch_rates(ax: Axes, table: Table) -> None:
    """Strength: catch rate per adversary as horizontal bars, one colour per campaign, the
    campaign's adversaries together in the table's order."""
    campaigns = _campaigns(table)
    labels = [str(r[0]) for r in table.rows]
    rates = [_num(r[4]) for r in table.rows]
    colours = [OTHER_COLOURS[campaigns.index(str(r[1])) % len(OTHER_COLOURS)]
               for r in table.rows]
    ys = list(range(len(labels)))
    bars = ax.barh(ys, rates, color=colours)
    for bar, row in zip(bars, table.rows, strict=True):
        ax.annotate(f"{_num(row[4]):.0f}% ({row[2]}/{row[3]})",
                    (bar.get_width(), bar.get_y() + bar.get_height() / 2), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize=6)
    ax.set_yticks(ys, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("Survivors caught (%)")
    ax.set_xlim(0, 115)
    if campaigns:
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(color=OTHER_COLOURS[i % len(OTHER_COLOURS)], label=c)
                           for i, c in enumerate(campaigns)],
                  frameon=False, fontsize=6, loc="lower right")
    else:
        _empty(ax)


def _retire_k(ax: Axes, table: Table) -> None:
    """Strength: survivors let through as the k strongest adversaries are retired, with the
    best and worst choice of k as a band."""
    for index, campaign in enumerate(_campaigns(table)):
        rows = [r for r in table.rows if r[1] == campaign]
        ks = [int(_num(r[0])) for r in rows]
        colour = OTHER_COLOURS[index % len(OTHER_COLOURS)]
        ax.fill_between(ks, [_num(r[3]) for r in rows], [_num(r[4]) for r in rows],
                        color=colour, alpha=0.15, linewidth=0)
        ax.plot(ks, [_num(r[2]) for r in rows], marker="o", color=colour, label=campaign)
    ax.set_xlabel("Adversaries retired (k), strongest first")
    ax.set_ylabel("Survivors let through")
    _whole(ax.xaxis)
    _whole(ax.yaxis)
    ax.legend(frameon=False, fontsize=6, loc="upper left")
    if not table.rows:
        _empty(ax)


DRAW: dict[str, tuple[str, Callable[[Axes, Table], None]]] = {
    "figure5a": ("Figure 5a · How far migrated runs get on the fixed suite", _levels),
    "figure5b": ("Figure 5b · Verifiers that found no counterexample", _survivors),
    "figure6": ("Figure 6 · Break rate of each verifier", _verifiers),
    "table2": ("Table 2 · Where each run stops", _funnel),
    "strength-adversaries": ("Instrument strength · catch rate per adversary", _catch_rates),
    "strength-retire": ("Instrument strength · retire-k curve", _retire_k),
}


def _runs_in(table: Table) -> int | None:
    """How many runs a figure's table counts (the ``runs`` column, or the funnel's
    outcomes), None when it counts rounds or shares only."""
    present = {c.key for c in table.columns}
    if "runs" in present:
        return int(sum(_num(v) for v in table.column("runs")))
    keys = [key for key, _label, _colour in FUNNEL]
    if all(key in present for key in keys):
        return int(sum(_num(v) for key in keys for v in table.column(key)))
    return None


def _draw(report: Report, figure_id: str) -> Figure:
    plt = _pyplot()
    table = report.table(figure_id)
    title, draw = DRAW[figure_id]
    rows = len(table.rows)
    tall = figure_id in ("table2", "strength-adversaries")
    height = max(3.2, (0.35 if figure_id == "table2" else 0.22) * rows + 1.6) if tall else 3.4
    fig, ax = plt.subplots(figsize=(6.8, height), layout="constrained")
    draw(ax, table)
    n = _runs_in(table) if figure_id in FIGURE_IDS else None
    ax.set_title(title + (f" (n = {n} runs)" if n is not None else ""), loc="left",
                 fontsize=10, fontweight="bold", pad=12 if figure_id == "table2" else 6)
    # The selection as the figure's caption, inside the layout (a text at (0, 0) was cut).
    fig.supxlabel(report.selection, fontsize=6, color="#777777", x=0.0, ha="left")
    found: Figure = fig
    return found


def figure_data(fig: Figure) -> dict[str, Any]:
    """What the figure shows, read back from its artists: title, axis labels, the category
    labels, each bar series (heights, or widths for horizontal bars), the legend entries
    and the text drawn on the axes."""
    ax = fig.axes[0]
    series: list[dict[str, Any]] = []
    horizontal = False
    for container in ax.containers:
        horizontal = getattr(container, "orientation", "vertical") == "horizontal"
        values = [float(b.get_width() if horizontal else b.get_height()) for b in container]
        series.append({"label": str(container.get_label()), "values": values})
    ticks = ax.get_yticklabels() if horizontal else ax.get_xticklabels()
    legend = ax.get_legend()
    return {
        "title": ax.get_title(loc="left"),
        "xlabel": ax.get_xlabel(),
        "ylabel": ax.get_ylabel(),
        "categories": [str(t.get_text()) for t in ticks],
        "series": series,
        "legend": [] if legend is None else [str(t.get_text()) for t in legend.get_texts()],
        "annotations": [str(t.get_text()) for t in ax.texts],
    }


def write_figures(report: Report, folder: Path) -> list[Path]:
    """Every figure of FIGURE_IDS as PDF and PNG (300 dpi) with its read-back JSON."""
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with plt.rc_context({"font.family": figure_families()}):  # see figure_fonts
        for figure_id in figure_ids(report):
            written += _write_one(plt, report, folder, figure_id)
    return written


def _write_one(plt: Any, report: Report, folder: Path, figure_id: str) -> list[Path]:
    fig = _draw(report, figure_id)
    stem = folder / FILE_STEMS[figure_id]
    written: list[Path] = []
    for suffix, dpi in ((".pdf", "figure"), (".png", 300)):
        fig.savefig(stem.with_suffix(suffix), dpi=dpi)
        written.append(stem.with_suffix(suffix))
    data = {"id": figure_id, **figure_data(fig)}
    stem.with_suffix(".json").write_text(json.dumps(data, indent=1, ensure_ascii=False)
                                         + "\n", encoding="utf-8")
    written.append(stem.with_suffix(".json"))
    plt.close(fig)
    return written


def figure_svgs(report: Report) -> dict[str, str]:
    """Every figure whose table the report has, as an inline SVG document (the HTML page's
    figures; a ``--compare`` report has none)."""
    plt = _pyplot()
    found: dict[str, str] = {}
    for figure_id in figure_ids(report):
        fig = _draw(report, figure_id)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
        plt.close(fig)
        text = buffer.getvalue()
        found[figure_id] = text[text.index("<svg"):]
    return found
