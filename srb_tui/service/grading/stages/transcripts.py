"""Grading transcripts where the published layout puts them: ``audit/review-N.jsonl`` and
``verification/round-<adversary>.jsonl`` in the run directory, one JSON event per line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, events: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``events`` to ``path`` (atomically: temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for event in events:
            handle.write(json.dumps(dict(event), ensure_ascii=False, default=str) + "\n")
    os.replace(tmp, path)
    return path


def review_path(run_dir: Path, index: int) -> Path:
    return run_dir / "audit" / f"review-{index}.jsonl"


def round_path(run_dir: Path, adversary_id: str) -> Path:
    return run_dir / "verification" / f"round-{adversary_id}.jsonl"
