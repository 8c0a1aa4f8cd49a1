"""``srb tasks mutants ID``: the mutants of State A a strength campaign would grade.

Issue 36, item 1 as far as it goes today: State A is prepared (verified and extracted as
``srb tasks prepare`` does) and the mutation engine (:mod:`srb_tui.strength.mutate`) samples
``--mutants N`` small behaviour changes with ``--seed S``; each is listed with its file:line,
operator and (``--diff``) its diff. The same task, N and seed give the same mutants. Grading
them (Stage II, then Stage III on the survivors) is not built yet.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from rich.markup import escape

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.arg_read import usable_task
from srb_tui.commands.arg_types import positive_int
from srb_tui.commands.output import Output
from srb_tui.config import Settings

DEFAULT_MUTANTS = 20


def add_mutants_parser(tsub: Any) -> None:
    p = tsub.add_parser("mutants", help="the mutants of State A a strength campaign grades")
    p.add_argument("task_id", metavar="ID")
    p.add_argument("--mutants", type=positive_int, default=DEFAULT_MUTANTS, metavar="N",
                   help=f"how many mutants to sample (default {DEFAULT_MUTANTS})")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="sampling seed (default 0)")
    p.add_argument("--diff", action="store_true", help="print each mutant's diff")
    p.add_argument("--offline", action="store_true", help="never use the network")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(handler=cmd_mutants)


def cmd_mutants(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    from srb_tui.service.app import Services, StateAError
    from srb_tui.strength.mutate import (
        MutationUnavailable,
        mutant_diff,
        sample_mutants,
        site_counts,
    )

    services = Services(settings)
    load = usable_task(services.catalog, settings, args.task_id, out)
    if isinstance(load, int):
        return load
    try:
        prepared = asyncio.run(services.prepare_state_a(load.task, offline=args.offline))
    except StateAError as exc:
        out.error(f"{load.task_id}: {exc}")
        return codes.INFRA
    tree = prepared.tree
    try:
        counts = site_counts(tree)
        mutants = sample_mutants(tree, args.mutants, args.seed)
    except MutationUnavailable as exc:
        out.error(f"{load.task_id}: {exc}")
        return codes.INFRA
    docs = []
    for mutant in mutants:
        doc = mutant.to_json()
        doc["diff"] = mutant_diff(tree, mutant)
        docs.append(doc)
    if out.json_mode:
        out.emit_json({"task": load.task_id, "seed": args.seed, "asked": args.mutants,
                       "sites": counts, "mutants": docs})
        return codes.OK
    total = sum(counts.values())
    spread = ", ".join(f"{op} {n}" for op, n in counts.items())
    out.print(f"[bold]{escape(load.task_id)}[/]: {total} mutation sites in State A ({spread}); "
              f"{len(mutants)} sampled with seed {args.seed}")
    for mutant, doc in zip(mutants, docs, strict=True):
        out.print(f"  {mutant.id}  {escape(mutant.describe())}")
        if args.diff:
            out.print(escape(doc["diff"].rstrip("\n")), highlight=False)
    if not mutants:
        out.warn(f"{load.task_id}: State A has no source file srb can mutate")
    return codes.OK
