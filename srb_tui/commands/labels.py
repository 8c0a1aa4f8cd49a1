"""``srb labels import FILE.csv``: human "genuine migration" labels for Table 6."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.reports.labels_csv import parse_labels
from srb_tui.store import ContentRefused, Store, StoreError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("labels", help="human labels of runs (judge agreement, Table 6)")
    lsub = p.add_subparsers(dest="labels_command", metavar="ACTION", required=True)
    imp = lsub.add_parser("import", help="import run_id,genuine,annotator rows from a CSV")
    imp.add_argument("file", metavar="FILE.csv")
    imp.add_argument("--json", action="store_true")
    imp.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        out.error(f"{path}: cannot read ({exc})")
        return codes.NOT_FOUND if not path.exists() else codes.USAGE
    labels, problems = parse_labels(text, str(path))
    if problems:
        for problem in problems:
            out.error(problem)
        out.error(f"{path}: nothing imported ({len(problems)} problem(s))")
        return codes.FAILED

    async def body() -> int:
        async with await Store.open(settings.db_path) as store:
            return await store.labels.import_labels(labels, str(path))

    try:
        written = asyncio.run(body())
    except ContentRefused as exc:
        out.error(str(exc))
        return codes.FAILED
    except StoreError as exc:
        out.error(str(exc))
        return codes.INFRA
    annotators = sorted({label.annotator for label in labels})
    if out.json_mode:
        out.emit_json({"file": str(path), "labels": written, "annotators": annotators})
    else:
        out.print(f"imported {written} label(s) by {', '.join(annotators) or 'nobody'} "
                  f"from {path}")
    return codes.OK
