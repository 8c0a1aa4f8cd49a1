"""Whether the selected runs may be pooled into one report: one grader, one task digest.

A run's grader fingerprint is its provenance's (else the one its stage results carry); its
task digest is its provenance's. Runs that record neither (older runs, imported trials) do
not make a pool mixed; they are counted as "unrecorded". ``srb report`` refuses a mixed
pool unless ``--mixed`` is given, and then says how many runs of each it pooled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from srb_tui.reports.records import ReportRun

UNRECORDED = "unrecorded"


@dataclass(frozen=True)
class Pool:
    """Runs per grader fingerprint, and per task the runs per task digest."""

    graders: dict[str, int]
    digests: dict[str, dict[str, int]]  # task -> digest -> runs

    @property
    def mixed_graders(self) -> bool:
        return len([g for g in self.graders if g != UNRECORDED]) > 1

    @property
    def mixed_tasks(self) -> list[str]:
        return sorted(t for t, d in self.digests.items()
                      if len([x for x in d if x != UNRECORDED]) > 1)

    @property
    def mixed(self) -> bool:
        return self.mixed_graders or bool(self.mixed_tasks)

    def problems(self) -> list[str]:
        """Why the pool is mixed, one sentence each (empty: it is not)."""
        out = []
        if self.mixed_graders:
            out.append(f"runs were graded by {len(self.graders)} grader builds: "
                       + _counts(self.graders))
        for task in self.mixed_tasks:
            out.append(f"task {task} was loaded as {len(self.digests[task])} different "
                       "directories: " + _counts(self.digests[task]))
        return out

    def summary(self) -> str:
        """What was pooled, for the report's notes."""
        tasks = sum(len([x for x in d if x != UNRECORDED]) for d in self.digests.values())
        return (f"Pooled runs of {len(self.graders)} grader fingerprint(s) ("
                f"{_counts(self.graders)}) and {tasks} task digest(s) over "
                f"{len(self.digests)} task(s)"
                + ("; mixed tasks: " + "; ".join(
                    f"{t} ({_counts(self.digests[t])})" for t in self.mixed_tasks)
                   if self.mixed_tasks else "") + ".")


    def trace(self) -> str | None:
        """Which grader build and task directories made the report's numbers, and where each
        run's image digests are (every report's notes); None when no run recorded any."""
        recorded = [g for g in self.graders if g != UNRECORDED] + [
            x for d in self.digests.values() for x in d if x != UNRECORDED]
        if not recorded:
            return None
        digests = "; ".join(f"{t} {_counts(d)}" for t, d in sorted(self.digests.items()))
        return (f"Provenance: grader fingerprint {_counts(self.graders)}; task digest "
                f"(sha256 of the task directory as loaded) {digests}. Each run's image "
                "digests by stage: srb runs show RUN --json (provenance), or the "
                "image_digests column of srb export's runs.parquet.")


def _short(value: str) -> str:
    return value.removeprefix("sha256:")[:12] if value != UNRECORDED else value


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{_short(k)} × {n}" for k, n in sorted(counts.items()))


def pool_of(runs: Sequence[ReportRun]) -> Pool:
    graders = Counter(r.grader or UNRECORDED for r in runs)
    digests: dict[str, Counter[str]] = {}
    for run in runs:
        digests.setdefault(run.task, Counter())[run.task_digest or UNRECORDED] += 1
    return Pool(dict(graders), {t: dict(c) for t, c in digests.items()})
