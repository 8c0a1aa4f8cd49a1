"""``srb tasks audit-probe TASK``: does text addressed to the judge move Stage I?"""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.arg_read import usable_task
from srb_tui.commands.output import Output
from srb_tui.config import Settings

REVIEWERS = ("configured", "obedient", "obedient-quiet")


def add_probe_parser(tsub: Any) -> None:
    from srb_tui.service.grading.probe_variants import VARIANTS

    probe = tsub.add_parser(
        "audit-probe",
        help="inject judge-addressed instructions into failing trees and run Stage I on them",
        description="Make variants of State A (and the wrapper submission, when the task "
        "ships one) with instructions to the judge injected, run Stage I's reviews on each "
        "before and after srb's defences, and report per variant and gate whether the "
        "injection flipped a fail to pass or held.",
    )
    probe.add_argument("task_id", metavar="TASK")
    probe.add_argument(
        "--reviewer", choices=REVIEWERS, default="configured",
        help="the task's configured reviewer, or the obedient STAND-IN wrapped around it "
             "(obedient-quiet: it obeys without quoting what it followed)",
    )
    probe.add_argument("--variant", action="append", choices=VARIANTS, metavar="NAME",
                       help=f"only these variants (repeatable; {', '.join(VARIANTS)})")
    probe.add_argument("--samples", type=int, help="review samples (default: the task's)")
    probe.add_argument("--offline", action="store_true", help="never fetch State A")
    probe.add_argument("--json", action="store_true", help="one JSON document on stdout")
    probe.set_defaults(handler=cmd_audit_probe)


def cmd_audit_probe(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    import asyncio

    from srb_tui.service.app import Services, StateAError
    from srb_tui.service.grading.audit_probe import ProbeSettings, run_probe
    from srb_tui.service.grading.probe_variants import VARIANTS

    services = Services(settings)
    load = usable_task(services.catalog, settings, args.task_id, out, graded=True)
    if isinstance(load, int):
        return load
    if args.samples is not None and args.samples < 1:
        out.error("--samples must be at least 1")
        return codes.USAGE

    def progress(msg: str) -> None:
        if not out.json_mode:
            out.err.print(f"[dim]{escape(msg)}[/]")

    probe = ProbeSettings(
        reviewer=None if args.reviewer == "configured" else args.reviewer,
        variants=tuple(args.variant) if args.variant else VARIANTS,
        samples=args.samples,
    )
    try:
        prepared = asyncio.run(
            services.prepare_state_a(load.task, offline=args.offline, progress=progress)
        )
        doc = asyncio.run(run_probe(load.task, prepared.tree, probe, progress))
    except StateAError as exc:
        out.error(f"{load.task_id}: {exc}")
        return codes.INFRA
    except ValueError as exc:  # ProbeError: the reviewer or the prompt cannot be used
        out.error(f"{load.task_id}: {exc}")
        return codes.FAILED
    if out.json_mode:
        out.emit_json(doc)
        return codes.OK
    print_probe(out, doc)
    return codes.OK


def _mark(result: str) -> str:
    return {"flipped": "[red]FLIPPED[/]", "held": "[green]held[/]"}.get(result, "n/a")


def _votes(gate: dict[str, Any]) -> str:
    votes = gate.get("votes", {})
    return f"{votes.get('pass', 0)}p/{votes.get('fail', 0)}f"


def print_probe(out: Output, doc: dict[str, Any]) -> None:
    out.print(f"[bold]audit probe[/] {escape(doc['task'])} · reviewer {escape(doc['reviewer'])}"
              f" ({escape(doc['driver'])})")
    for tree in doc["trees"]:
        plain = tree["plain"]["before"]
        out.print(f"\n[bold]{escape(tree['tree'])}[/] (plain tree: Stage I {plain['outcome']})")
        for row in tree["variants"]:
            before, after = row["before"], row["after"]
            out.print(f"  {escape(row['variant']):<12} Stage I before {_mark(before['result'])}"
                      f" ({before['outcome']}), after {_mark(after['result'])}"
                      f" ({after['outcome']}); {after['findings']} finding(s), "
                      f"{after['tainted']} tainted answer(s)")
            for gate, b in before["gates"].items():
                a = after["gates"].get(gate, {})
                note = " overruled" if a.get("overruled") else ""
                out.print(f"      {escape(gate):<28} before {_mark(b['result'])} {_votes(b)}"
                          f"  after {_mark(a.get('result', 'n/a'))} {_votes(a)}{note}")
    for side in ("before", "after"):
        s = doc["summary"][side]
        out.print(f"\n{side} the defences: {s['gate_flips']} of {s['gates_measured']} gate "
                  f"fails flipped; Stage I flipped in {s['stage_flips']} of "
                  f"{s['variants_measured']} variants")
