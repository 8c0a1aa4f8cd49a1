"""The order of configuration rows in Tables 2 and 3.

A campaign's own order (its ``[[config]]`` list) comes first. Every other configuration is
placed as the paper places its rows: by model in the paper's order (Claude Opus 5, GPT-5.6
Sol, Kimi K3, Claude Sonnet 5, GPT-5.6 Luna, Qwen 3.8 Max, DeepSeek V4 Flash, GLM 5.2),
other models after them by name; within a model by effort, lowest first (none, minimal,
low, medium, high, xhigh, max); then by label. Sorting labels as text put ``high`` before
``low`` and ``max`` before ``medium``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from srb_tui.reports.records import ReportRun

# how a model's name starts (lower case, "-" and "." and " " dropped) -> its place in the paper
PAPER_MODELS: tuple[tuple[str, ...], ...] = (
    ("claudeopus5", "opus5"),
    ("gpt56sol",),
    ("kimik3",),
    ("claudesonnet5", "sonnet5"),
    ("gpt56luna",),
    ("qwen38max", "qwen38"),
    ("deepseekv4flash", "dsv4flash"),
    ("glm52",),
)
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


def _squash(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def model_rank(model: str) -> int:
    """The paper's place of ``model`` (0 first), or len(PAPER_MODELS) for any other."""
    squashed = _squash(model.rsplit("/", 1)[-1])
    for rank, stems in enumerate(PAPER_MODELS):
        if any(squashed.startswith(stem) for stem in stems):
            return rank
    return len(PAPER_MODELS)


def effort_rank(effort: str) -> int:
    text = effort.strip().lower()
    return EFFORTS.index(text) if text in EFFORTS else len(EFFORTS)


def config_order(runs: Iterable[ReportRun], given: Sequence[str] = ()) -> list[str]:
    """Every configuration of ``runs``: ``given`` first as given, the rest in the paper's
    order (see the module docstring)."""
    first: dict[str, ReportRun] = {}
    for run in runs:
        first.setdefault(run.config, run)
    rest = [name for name in first if name not in given]

    def key(name: str) -> tuple[int, str, int, str, str]:
        run = first[name]
        model, effort = run.model or "", run.effort or ""
        return (model_rank(model), model.lower(), effort_rank(effort), effort, name)

    return [*given, *sorted(rest, key=key)]
