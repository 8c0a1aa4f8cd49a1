"""Output for headless commands: Rich for people, exactly one JSON document for ``--json``."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console


@dataclass
class Output:
    """Where a command writes. Errors always go to stderr."""

    json_mode: bool = False
    console: Console = field(default_factory=lambda: Console(highlight=False, soft_wrap=True))
    err: Console = field(
        default_factory=lambda: Console(stderr=True, highlight=False, soft_wrap=True)
    )

    def emit_json(self, document: Any) -> None:
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=str))
        sys.stdout.write("\n")
        sys.stdout.flush()

    def error(self, message: str) -> None:
        self.err.print(f"[bold red]error:[/] {message}", markup=True)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self.console.print(*objects, **kwargs)
