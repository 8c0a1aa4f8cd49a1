"""Where a Stage II run's time goes: the grader's own phases, summed over the modules.

The suite runner times each phase of its work around the modules (``perf_counter_ns``, a
few microseconds a phase) and keeps the sums in the stage result's metadata
(``phases_sec``), so a slow stage explains itself: the module processes against the
grader's work between them (checkpoints, the module's folders and boundary, the end of the
submission's processes, the suite's digest, the result's reading).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES = ("stage_submission", "checkpoint", "progress", "module_setup", "module_process",
          "module_end", "suite_digest", "result_read")
"""The phases in the order they are reported (a run may have time in only some)."""


class Phases:
    """Seconds per phase, summed over the modules of a run."""

    def __init__(self) -> None:
        self._ns: dict[str, int] = {}

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        began = time.perf_counter_ns()
        try:
            yield
        finally:
            self.add_ns(name, time.perf_counter_ns() - began)

    def add_ns(self, name: str, ns: int) -> None:
        self._ns[name] = self._ns.get(name, 0) + ns

    @staticmethod
    def now() -> int:
        return time.perf_counter_ns()

    def lap(self, name: str, since: int) -> int:
        """Count the time from ``since`` (a :meth:`now`) to ``name``; the new now."""
        now = time.perf_counter_ns()
        self.add_ns(name, now - since)
        return now

    def seconds(self) -> dict[str, float]:
        """Every phase with time in it, in :data:`PHASES` order, to the tenth of a ms."""
        order = [name for name in PHASES if name in self._ns]
        order += sorted(name for name in self._ns if name not in PHASES)
        return {name: round(self._ns[name] / 1e9, 4) for name in order}
