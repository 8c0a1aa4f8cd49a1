"""Near-miss detection for key names: "did you mean `timeout_sec`?".

A key is compared with the known names after folding case and treating ``-`` as
``_``; :mod:`difflib` decides what is close enough to be a typo.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: Similarity (difflib ratio) from which an unknown key counts as a typo of a known one.
TYPO_CUTOFF = 0.75


def _fold(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def suggest(name: str, known: Iterable[str], *, cutoff: float = TYPO_CUTOFF) -> str | None:
    """The known name ``name`` most plausibly misspells, or ``None``.

    An exact match is not a suggestion (it returns ``None``): the caller asks only
    about names it does not know.
    """
    candidates = sorted(set(known))
    if name in candidates:
        return None
    folded = {_fold(k): k for k in candidates}
    hit = folded.get(_fold(name))
    if hit is not None:
        return hit
    close = difflib.get_close_matches(_fold(name), list(folded), n=1, cutoff=cutoff)
    return folded[close[0]] if close else None


def did_you_mean(name: str, known: Iterable[str], *, cutoff: float = TYPO_CUTOFF) -> str:
    """``"; did you mean `x`?"`` when a suggestion exists, else an empty string."""
    hit = suggest(name, known, cutoff=cutoff)
    return f"; did you mean `{hit}`?" if hit else ""
