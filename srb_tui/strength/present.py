"""A strength campaign's figures as one JSON document and as plain text lines — the one
shape the CLI (`srb tasks strength`), the report (`srb report --strength`) and the
console's Strength screen read (issue 36). Pure: no store, no engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srb_tui.strength.scores import StrengthFigures


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def figures_doc(figures: StrengthFigures) -> dict[str, Any]:
    """Every figure, JSON-ready."""
    return {
        "mutants": figures.mutants, "invalid": figures.invalid,
        "equivalent": figures.equivalent, "valid": figures.valid,
        "killed": figures.killed, "suite_score": figures.suite_score,
        "survivors": list(figures.survivors),
        "graded_survivors": figures.graded_survivors, "caught": figures.caught,
        "uncaught": list(figures.uncaught), "panel_strength": figures.panel_strength,
        "adversaries": [{"id": a.adversary, "caught": a.caught, "graded": a.graded,
                         "rate": a.rate, "exclusive": a.exclusive}
                        for a in figures.adversaries],
        "retire": [{"retired": r.retired, "strongest_retired": list(r.strongest_retired),
                    "let_through_strongest": r.let_through_strongest,
                    "let_through_best": r.let_through_best,
                    "let_through_worst": r.let_through_worst} for r in figures.retire],
    }


def summary_lines(doc: Mapping[str, Any], *, compact: bool = False) -> list[str]:
    """The figures as text (no markup): suite score, panel strength, each adversary,
    the retire-k curve. ``compact`` (the console): each adversary named by its column
    (A1, A2, …) too, and the retire-k curve on one line."""
    lines = [f"suite mutation score {_pct(doc['suite_score'])}: {doc['killed']} killed of "
             f"{doc['valid']} valid mutants ({doc['invalid']} invalid, {doc['equivalent']} "
             "marked equivalent, left out)"]
    survivors: Sequence[str] = doc["survivors"]
    if not survivors:
        return lines
    graded = int(doc["graded_survivors"])
    if not graded:
        lines.append(f"{len(survivors)} Stage II survivors, not yet graded by the panel: "
                     + ", ".join(survivors))
        return lines
    lines.append(f"panel strength {_pct(doc['panel_strength'])}: {doc['caught']} of {graded} "
                 "graded survivors caught by at least one adversary"
                 + (f"; uncaught: {', '.join(doc['uncaught'])}" if doc["uncaught"] else ""))
    width = max(len(a["id"]) for a in doc["adversaries"]) if doc["adversaries"] else 9
    column = "    " if compact else ""
    lines.append(f"  {column}{'adversary':<{width}}  caught  rate  exclusive")
    for index, a in enumerate(doc["adversaries"]):
        tag = f"A{index + 1:<3}" if compact else ""
        lines.append(f"  {tag}{a['id']:<{width}}  {a['caught']:>6}  {_pct(a['rate']):>4}  "
                     f"{a['exclusive']:>9}")
    if compact:
        lines.append("retire-k, let through with the k strongest / best / worst k retired: "
                     + " · ".join(f"k={s['retired']} {s['let_through_strongest']}/"
                                  f"{s['let_through_best']}/{s['let_through_worst']}"
                                  for s in doc["retire"]))
        return lines
    lines.append("retire-k (survivors let through with k adversaries retired: the k "
                 "strongest / best / worst choice):")
    for step in doc["retire"]:
        lines.append(f"  k={step['retired']}: {step['let_through_strongest']} / "
                     f"{step['let_through_best']} / {step['let_through_worst']}"
                     + (f"  (retired {', '.join(step['strongest_retired'])})"
                        if step["strongest_retired"] else ""))
    return lines
