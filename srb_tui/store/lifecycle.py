"""The run lifecycle: statuses, which ones are final, and which transitions are legal.

``pending → preparing → agent → collecting → audit → behavioural → verification → scored``
with side exits ``cancelled`` and ``infra_error`` from every non-final state. Grading may end
early (``audit``/``behavioural`` → ``scored``: Stage III does not run when Stage I failed or
Stage II is incomplete), and a scored run may be re-graded from ``audit``, ``behavioural`` or
``verification``. A strength mutant's run (``pending → verification → scored``) runs
Stage III alone.
"""

from __future__ import annotations

import itertools
from typing import Final, Literal, get_args

from srb_tui.schema.stage_names import STAGE_NAMES

RunStatus = Literal[
    "pending",
    "preparing",
    "agent",
    "collecting",
    "audit",
    "behavioural",
    "verification",
    "scored",
    "cancelled",
    "infra_error",
]

RUN_STATUSES: Final[tuple[str, ...]] = get_args(RunStatus)
MAIN_LINE: Final[tuple[str, ...]] = ("pending", "preparing", "agent", "collecting",
                                     *STAGE_NAMES, "scored")
FINAL_STATUSES: Final[frozenset[str]] = frozenset({"scored", "cancelled", "infra_error"})
SIDE_EXITS: Final[frozenset[str]] = frozenset({"cancelled", "infra_error"})
GRADING_STATUSES: Final[tuple[str, ...]] = STAGE_NAMES


def _legal_pairs() -> frozenset[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for here, there in itertools.pairwise(MAIN_LINE):
        pairs.add((here, there))
    # Early end of grading: Stage III skipped (Stage I failed / Stage II incomplete / absent).
    pairs.add(("audit", "scored"))
    pairs.add(("behavioural", "scored"))
    # A strength campaign's mutant (issue 36) is graded by Stage III alone: it is not a
    # migration (no Stage I) and the campaign already graded its Stage II. Its run goes
    # from pending straight to verification; no stage it did not run is passed through.
    pairs.add(("pending", "verification"))
    for status in RUN_STATUSES:
        if status not in FINAL_STATUSES:
            for exit_ in SIDE_EXITS:
                pairs.add((status, exit_))
    for stage in GRADING_STATUSES:
        pairs.add(("scored", stage))
    # A grading resumed or re-graded from an earlier stage goes straight back to it: a run
    # must never read as scored before it is (it used to pass behavioural → scored → audit).
    for later, earlier in itertools.combinations(reversed(GRADING_STATUSES), 2):
        pairs.add((later, earlier))
    return frozenset(pairs)


LEGAL_TRANSITIONS: Final[frozenset[tuple[str, str]]] = _legal_pairs()


def is_status(value: str) -> bool:
    """Whether ``value`` names a run status."""
    return value in RUN_STATUSES


def is_final(status: str) -> bool:
    """Whether a run in ``status`` is finished (nothing runs for it any more)."""
    return status in FINAL_STATUSES


def is_legal(from_status: str, to_status: str) -> bool:
    """Whether the lifecycle allows ``from_status → to_status``."""
    return (from_status, to_status) in LEGAL_TRANSITIONS


def next_statuses(status: str) -> tuple[str, ...]:
    """The statuses reachable from ``status`` in one legal step, in lifecycle order."""
    return tuple(s for s in RUN_STATUSES if (status, s) in LEGAL_TRANSITIONS)
