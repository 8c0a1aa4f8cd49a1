"""``srb tasks strength ID --mutants N --seed S``: a strength campaign (issue 36).

Plans the mutants of State A (stored whole under an id that follows from task, N and
seed, so the same command resumes), grades by Stage II every mutant without an outcome in
the identity run's image, then the task's adversary panel on every Stage II survivor
without a verdict (each in a run of its own, agent ``mutant:<campaign>/<id>``), and prints
each outcome and the figures: the suite's mutation score (killed / valid, equivalent marks
excluded), the panel's strength, each adversary's catches and exclusive catches, and the
retire-k curve.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from rich.markup import escape

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.arg_types import positive_int
from srb_tui.commands.grading import CommandError, _progress_printer, _usable_task
from srb_tui.commands.output import Output
from srb_tui.commands.strength import DEFAULT_MUTANTS
from srb_tui.config import Settings
from srb_tui.reports.strength import caught_by
from srb_tui.strength.present import figures_doc, summary_lines


def add_strength_parser(tsub: Any) -> None:
    p = tsub.add_parser("strength", help="mutants of State A graded by Stage II and the "
                        "adversary panel: the task's instrument strength")
    p.add_argument("task_id", metavar="ID")
    p.add_argument("--mutants", type=positive_int, default=DEFAULT_MUTANTS, metavar="N",
                   help=f"how many mutants (default {DEFAULT_MUTANTS})")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="sampling seed (default 0)")
    p.add_argument("--of", dest="of_tree", choices=("state-a", "reference"),
                   default="state-a", help="the tree mutated: State A (default) or the "
                   "task's reference submission, graded in Stage II's image")
    p.add_argument("--budget", type=_seconds, default=None, metavar="SEC",
                   help="each adversary's budget per survivor (default: the probe's)")
    p.add_argument("--jobs", type=positive_int, default=1, metavar="J",
                   help="mutants graded by Stage II at once (default 1)")
    p.add_argument("--no-stage-iii", dest="stage_iii", action="store_false",
                   help="grade Stage II only (the suite's mutation score)")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(handler=cmd_strength)


def _quiet(publish: Any) -> Any:
    """Only what is not per-mutant chatter: image builds and faults (each mutant's line is
    printed by the campaign; a stage's module-by-module progress would bury it)."""

    def filtered(event: object) -> None:
        message = str(getattr(event, "message", ""))
        if message.startswith(("behavioural:", "verification:")) and \
                "image" not in message:
            return
        publish(event)

    return filtered


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--budget: {text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"--budget: {text!r} must be a positive number "
                                         "of seconds")
    return value


async def _strength(args: argparse.Namespace, settings: Settings, out: Output
                    ) -> dict[str, Any]:
    from srb_tui.service import strength
    from srb_tui.service.app import EngineUnreachable, open_service

    async with open_service(settings) as services:
        from srb_tui.service.catalog import task_hint

        task = _usable_task(services.catalog.find(args.task_id),
                            repr(args.task_id) + task_hint(settings.task_roots, args.task_id))

        def said(row: Any, outcome: str) -> None:
            if not out.json_mode:
                out.err.print(f"{row.mutant_id} {escape(row.path)}:{row.line} "
                              f"{row.operator}: {outcome}")

        try:
            campaign, added, graded, panelled = await strength.run_campaign(
                services, task, asked=args.mutants, seed=args.seed,
                of_tree=args.of_tree, stage_iii=args.stage_iii, budget_sec=args.budget,
                jobs=args.jobs,
                publish=_quiet(_progress_printer(out)), on_mutant=said)
        except EngineUnreachable as exc:
            raise CommandError(str(exc), codes.INFRA) from exc
        except strength.StrengthFailed as exc:
            raise CommandError(str(exc), codes.INFRA) from exc
        store = await services.store()
        got = await strength.campaign_figures(store, campaign.id)
        stored = await store.strength.campaign(campaign.id)
        node = stored.node if stored is not None else None
        rows = await store.strength.mutants(campaign.id)
    return {
        "campaign": campaign.id, "task": task.id, "mutants": args.mutants, "seed": args.seed,
        "planned_now": added, "graded_now": graded, "panel_graded_now": panelled,
        "panel": list(campaign.panel), "node": node, **figures_doc(got),
        "rows": [{"id": r.mutant_id, "path": r.path, "line": r.line, "operator": r.operator,
                  "stage_ii": r.stage_ii, "stage_iii_run": r.stage_iii_run,
                  "caught_by": caught_by(r)
                  if r.stage_iii_done else None,
                  "equivalent": r.equivalent is not None}
                 for r in rows],
    }


def cmd_strength(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    try:
        doc = asyncio.run(_strength(args, settings, out))
    except CommandError as exc:
        out.error(str(exc))
        return exc.code
    if out.json_mode:
        out.emit_json(doc)
        return codes.OK
    out.print(f"[bold]{escape(doc['task'])}[/] strength campaign {escape(doc['campaign'])}"
              + (f" (graded on node {escape(doc['node'])})" if doc["node"] else ""))
    for line in summary_lines(doc):
        out.print(escape(line))
    return codes.OK
