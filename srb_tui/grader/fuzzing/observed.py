"""What a fuzz execution observed on one tree: one run of the entry (the argv fuzzer) or one
server's answer (the HTTP fuzzer). Shared by the fuzzers and the candidate scripts they
write (:mod:`.script`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SHOWN_CHARS = 2000
"""How much of a run's stdout (its head) and stderr (its tail) a record shows."""
SHOWN_BYTES = 2000
"""How much of a response body a record shows."""


@dataclass(frozen=True)
class Observation:
    """One run of the entry on one tree."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration_sec: float
    start_error: str | None = None

    def signature(self) -> tuple[Any, ...]:
        """What two trees must agree on: how the run ended and stdout, byte for byte."""
        return (self.start_error is not None, self.timed_out, self.exit_code, self.stdout)

    def to_dict(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "duration_sec": round(self.duration_sec, 3),
            "start_error": self.start_error,
            "stdout": self.stdout[:SHOWN_CHARS].decode("utf-8", "backslashreplace"),
            "stdout_bytes": len(self.stdout),
            "stderr": self.stderr[-SHOWN_CHARS:].decode("utf-8", "backslashreplace"),
        }


@dataclass(frozen=True)
class Response:
    """What one server answered (or how the exchange failed)."""

    status: int | None
    headers: tuple[tuple[str, str], ...]
    body: bytes
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "headers": [list(h) for h in self.headers],
            "body": self.body[:SHOWN_BYTES].decode("utf-8", "backslashreplace"),
            "body_bytes": len(self.body),
            "error": self.error,
        }
