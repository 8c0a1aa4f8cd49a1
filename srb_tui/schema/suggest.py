"""Near-miss detection for key names ("did you mean `timeout_sec`?"): the grader's
stdlib-only reader holds it (``srb_tui.grader.manifests.table``), so a manifest's problem
reads the same on the host and in a stage container."""

from __future__ import annotations

from srb_tui.grader.manifests.table import TYPO_CUTOFF, did_you_mean, suggest

__all__ = ["TYPO_CUTOFF", "did_you_mean", "suggest"]
