"""The paper's figures (as tables of their bars) and the Stage I consistency numbers.

Figure 5a: among migrated runs, the share reaching each level of fixed checks passed; the
runs in [99 %, 100 %) with their median number of missed checks; the checks most often
missed alone. Figure 5b: among Stage III entrants, how many verifiers survived (0–6).
Time to a counterexample vs to a survival (medians of round durations). Stage I
consistency (3.4.1): unanimous vs split gate verdicts, runs that passed only by majority.
Figure 6: break rate per verifier slot (slot, model, effort, pooled over tasks) and its
exclusive breaks; the per-task adversaries as a second table; own-family vs other-family
break rates (Finding 2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

from srb_tui.grader.contract import model_family
from srb_tui.reports.model import Column, Table, mean, median, pct
from srb_tui.reports.records import ReportRun, Round

K = TypeVar("K")

# Levels as exact fractions (numerator, denominator) so 99.9 % is not a float comparison.
LEVELS = (("≥ 50%", 1, 2), ("≥ 90%", 9, 10), ("≥ 99%", 99, 100), ("≥ 99.9%", 999, 1000),
          ("100%", 1, 1))


def _measured_migrated(runs: Sequence[ReportRun]) -> list[ReportRun]:
    return [r for r in runs if r.migrated and r.checks_total and r.checks_passed is not None]


def levels_figure(runs: Sequence[ReportRun]) -> Table:
    """Figure 5a: share of migrated runs reaching each level of the fixed suite."""
    pool = _measured_migrated(runs)
    table = Table("figure5a", "Figure 5a · how far migrated runs get on the fixed suite", [
        Column("level", "Fixed checks passed", "text"),
        Column("runs", "Runs"),
        Column("share", "Share %", "pct"),
    ], bar="share")
    for label, num, den in LEVELS:
        reached = sum(
            1 for r in pool
            if (r.checks_passed or 0) * den >= num * (r.checks_total or 0)
        )
        table.rows.append([label, reached, pct(reached, len(pool))])
    near = [r for r in pool
            if (r.checks_passed or 0) * 100 >= 99 * (r.checks_total or 0)
            and (r.checks_passed or 0) < (r.checks_total or 0)]
    missed = [float(r.missed_count or 0) for r in near]
    exactly_one = sum(1 for r in pool if r.missed_count == 1)
    med = median(missed)
    table.notes.append(f"Over {len(pool)} migrated runs whose Stage II measured.")
    table.notes.append(
        f"{len(near)} runs in [99%, 100%), missing a median of "
        f"{'—' if med is None else f'{med:g}'} checks; {exactly_one} miss exactly one."
    )
    return table


def missed_alone_table(runs: Sequence[ReportRun]) -> Table:
    """The checks most often missed alone (by migrated runs that miss exactly one)."""
    table = Table("missed_alone", "Figure 5a · checks most often missed alone", [
        Column("check", "Check", "text"),
        Column("task", "Task", "text"),
        Column("runs", "Runs"),
        Column("configs", "Configurations"),
    ], bar="runs")
    hits: Counter[tuple[str, str]] = Counter()
    configs: dict[tuple[str, str], set[str]] = {}
    unknown = 0
    for r in _measured_migrated(runs):
        if r.missed_count != 1:
            continue
        if not r.missed or len(r.missed) != 1:
            unknown += 1
            continue
        key = (r.missed[0], r.task)
        hits[key] += 1
        configs.setdefault(key, set()).add(r.config)
    for (check, task), count in sorted(hits.items(), key=lambda kv: (-kv[1], kv[0])):
        table.rows.append([check, task, count, len(configs[(check, task)])])
    if unknown:
        table.notes.append(f"{unknown} run(s) miss one check whose id is not stored "
                           "(a module that could not report).")
    return table


def survivors_figure(runs: Sequence[ReportRun]) -> Table:
    """Figure 5b: histogram of surviving verifiers among Stage III entrants."""
    entrants = [r for r in runs if r.entered_stage3 and r.verification_ran]
    top = max([6, *(r.models_total for r in entrants)])
    table = Table("figure5b", "Figure 5b · verifiers that found no counterexample", [
        Column("survivors", "Survivors"),
        Column("runs", "Runs"),
        Column("share", "Share %", "pct"),
    ], bar="runs")
    counts = Counter(r.survivors or 0 for r in entrants)
    for k in range(top + 1):
        table.rows.append([k, counts.get(k, 0), pct(counts.get(k, 0), len(entrants))])
    avg = mean([float(r.survivors or 0) for r in entrants])
    broken = sum(r.outcome == "counterexample" for r in entrants)
    table.notes.append(
        f"{len(entrants)} Stage III entrants; {broken} had a counterexample upheld; mean "
        f"survivors {'—' if avg is None else f'{avg:.2f}'} of {top}. Only the rightmost bar "
        "is accepted."
    )
    return table


def times_table(runs: Sequence[ReportRun]) -> Table:
    """Median round time to a counterexample vs to a survival (Stage III entrants)."""
    table = Table("stage3_times", "Stage III · time to a counterexample vs to a survival", [
        Column("kind", "Round outcome", "text"),
        Column("rounds", "Rounds"),
        Column("median_min", "Median minutes", "num"),
    ])
    for kind, outcome in (("counterexample", "broken"), ("survival", "survived")):
        durations = [float(rd.duration_sec) / 60 for r in runs if r.entered_stage3
                     for rd in r.rounds if rd.outcome == outcome and rd.duration_sec is not None]
        table.rows.append([kind, len(durations), median(durations)])
    return table


def stage1_table(runs: Sequence[ReportRun]) -> Table:
    """Stage I consistency: unanimous vs split gate verdicts; majority-only passes."""
    judged = [r for r in runs if r.counted and r.audit_gate in ("pass", "fail")]
    summaries = [r.gates for r in judged if r.gates is not None]
    total = sum(g.verdicts for g in summaries)
    unanimous = sum(g.unanimous for g in summaries)
    tied = sum(g.tied for g in summaries)
    split = total - unanimous - tied
    migrated = [r for r in judged if r.audit_gate == "pass"]
    by_majority = sum(1 for r in migrated if r.gates is not None and r.gates.majority_only)
    table = Table("stage1", "Stage I consistency", [
        Column("measure", "Measure", "text"),
        Column("n", "n"),
        Column("share", "Share %", "pct"),
    ])
    table.rows += [
        ["gate verdicts", total, None],
        ["unanimous", unanimous, pct(unanimous, total)],
        ["split (majority)", split, pct(split, total)],
        ["tied (counted pass)", tied, pct(tied, total)],
        ["runs passing Stage I", len(migrated), None],
        ["passed only by majority", by_majority, pct(by_majority, len(migrated))],
        ["would pass if any dissent counted", len(migrated) - by_majority,
         pct(len(migrated) - by_majority, len(migrated))],
    ]
    addressed = [r for r in judged if r.addressed_judge]
    table.rows.append(["submissions that addressed the judge", len(addressed),
                       pct(len(addressed), len(judged))])
    return table


def _entrants(runs: Sequence[ReportRun]) -> list[ReportRun]:
    return [r for r in runs if r.entered_stage3 and r.verification_ran]


VerifierKey = tuple[str, str, str]  # (slot, model, effort)


def _verifier_key(rd: Round) -> VerifierKey:
    return (rd.slot, rd.model, rd.effort)


def _tally(runs: Sequence[ReportRun], key: Callable[[ReportRun, Round], K]
           ) -> dict[K, list[int]]:
    """key -> [rounds judged, breaks, exclusive breaks, errored rounds] over the entrants."""
    found: dict[K, list[int]] = {}
    for r in _entrants(runs):
        breakers = [rd for rd in r.rounds if rd.outcome == "broken"]
        for rd in r.rounds:
            entry = found.setdefault(key(r, rd), [0, 0, 0, 0])
            if rd.outcome in ("broken", "survived"):
                entry[0] += 1
                entry[1] += rd.outcome == "broken"
            else:
                entry[3] += 1
        if len(breakers) == 1:
            found[key(r, breakers[0])][2] += 1
    return found


# What Figure 6 and its per-adversary detail say of each bar after naming it.
_BREAK_COLUMNS = (
    Column("model", "Model", "text"),
    Column("effort", "Effort", "text"),
    Column("rounds", "Rounds"),
    Column("broken", "Breaks"),
    Column("rate", "Break rate %", "pct"),
    Column("exclusive", "Exclusive breaks"),
    Column("errors", "Errored rounds"),
)


def verifier_table(runs: Sequence[ReportRun]) -> Table:
    """Figure 6: one bar per verifier — a slot (a01–a06) holding one model at one effort —
    pooled over every task it met: rounds, breaks, break rate, exclusive breaks, errors."""
    table = Table("figure6", "Figure 6 · break rate per verifier", [
        Column("verifier", "Verifier", "text"),
        Column("slot", "Slot", "text"),
        *_BREAK_COLUMNS,
    ], bar="rate")
    tally = _tally(runs, lambda _r, rd: _verifier_key(rd))
    for (slot, model, effort), (n, b, excl, err) in sorted(tally.items()):
        label = " · ".join(part for part in (slot, model or "—", effort) if part)
        table.rows.append([label, slot, model, effort or None, n, b, pct(b, n), excl, err])
    models: dict[str, list[int]] = {}
    for (_slot, model, _effort), (n, b, _x, _e) in tally.items():
        entry = models.setdefault(model, [0, 0])
        entry[0] += n
        entry[1] += b
    for model, (n, b) in sorted(models.items()):
        table.notes.append(f"model {model or '—'}: {b}/{n} rounds broke ({pct(b, n) or 0:.1f}%)")
    tasks = len({r.task for r in _entrants(runs)})
    table.notes.append(f"Pooled over {len(_entrants(runs))} Stage III entrants on {tasks} "
                       "task(s); a slot is the adversary id up to its first '-'.")
    table.notes.append("Exclusive: the only verifier that broke that submission.")
    return table


def adversary_table(runs: Sequence[ReportRun]) -> Table:
    """Figure 6's detail: one row per task-specific adversary (task, id, model, effort)."""
    table = Table("figure6_adversaries", "Figure 6 · per-task adversaries", [
        Column("adversary", "Adversary", "text"),
        Column("task", "Task", "text"),
        *_BREAK_COLUMNS,
    ], bar="rate")
    tally = _tally(runs, lambda r, rd: (rd.adversary, r.task, rd.model, rd.effort))
    for (adversary, task, model, effort), (n, b, excl, err) in sorted(tally.items()):
        table.rows.append([adversary, task, model, effort or None, n, b, pct(b, n), excl, err])
    return table


def family_table(runs: Sequence[ReportRun]) -> Table:
    """Finding 2: break rate of verifiers on submissions written by their own model family
    against the others, pooled and per verifier family."""
    table = Table("figure6_family", "Figure 6 · own family vs other families", [
        Column("verifiers", "Verifiers", "text"),
        Column("authors", "Submissions by", "text"),
        Column("rounds", "Rounds"),
        Column("broken", "Breaks"),
        Column("rate", "Break rate %", "pct"),
    ], bar="rate")
    pooled = {"own": [0, 0], "other": [0, 0]}
    by_family: dict[tuple[str, str], list[int]] = {}
    for r in _entrants(runs):
        author = model_family(r.model)
        if author is None:
            continue
        for rd in r.rounds:
            family = model_family(rd.model)
            if family is None or rd.outcome not in ("broken", "survived"):
                continue
            side = "own" if family == author else "other"
            for entry in (pooled[side], by_family.setdefault((family, side), [0, 0])):
                entry[0] += 1
                entry[1] += rd.outcome == "broken"
    for side, label in (("own", "their own family"), ("other", "other families")):
        n, b = pooled[side]
        table.rows.append(["all", label, n, b, pct(b, n)])
    for (family, side), (n, b) in sorted(by_family.items()):
        table.rows.append([family, "its own family" if side == "own" else "other families",
                           n, b, pct(b, n)])
    table.notes.append("Author family from the run's model; verifier family from the "
                       "round's model. Fuzzers and runs without a model are left out.")
    return table
