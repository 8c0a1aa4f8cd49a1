"""A Stage III round's opening message, rendered the way the published harness does.

The probe's ``prompt`` is a path relative to the probe's own folder (``prompt.txt`` beside
probe.toml in every published task). Its ``{{task}}``, ``{{focus}}``, ``{{original}}``,
``{{submission}}`` (alias ``{{workspace}}``), ``{{roots}}``, ``{{commands}}``, ``{{gates}}``
and ``{{findings}}`` placeholders are filled (unknown ones stay visible, so a typo shows in
the transcript), and the round's rules follow the task's own words: the scope lists, the
round's focus, its wall-clock budget, how often a candidate must reproduce, and how paths
name a tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from srb_tui.grader.audit.review import render_prompt
from srb_tui.schema import Adversary, Probe, Task

from .common import tests_dir
from .stage_layout import ORIGINAL_DIR, SUBMISSION_DIR

ADVERSARY_EXPECTATIONS = (
    "Expectations belong in the candidate: write the output you expect (what State A "
    "gives) into the candidate's own files and compare the program's output against it "
    "outside the tree under test (in the candidate's folder or a scratch directory). "
    "Never write markers into either tree, read one tree's output from the other, or "
    "detect which tree you run on: such a candidate is refused."
)
"""Issue 25: said to every model adversary (SDK, scripted and client drivers alike)."""
ADVERSARY_SYSTEM = (
    "You are a Stage III verifier of a repository migration. State A ('original') and the "
    "migrated submission are open to you read-only. Find one behaviour in scope where they "
    "differ and prove it with an executable candidate: try it with try_test, then report "
    "it. A candidate counts only if it passes on State A, fails on the submission, "
    "reproduces every time and stays in scope. "
    + ADVERSARY_EXPECTATIONS
)


class PromptMissing(Exception):
    """The probe's prompt file cannot be read (the message names the path)."""


def probe_prompt_path(task: Task, folder: str, prompt: str) -> Path:
    """Where the prompt is: relative to the probe's folder. A task written for srb's earlier
    reading (relative to ``tests/``) still works when only that file exists."""
    here = tests_dir(task) / folder / prompt
    legacy = tests_dir(task) / prompt
    if not here.is_file() and legacy.is_file():
        return legacy
    return here


def read_probe_prompt(task: Task, folder: str, prompt: str) -> str:
    path = probe_prompt_path(task, folder, prompt)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        rel = f"tests/{folder}/{prompt}" if folder else f"tests/{prompt}"
        raise PromptMissing(f"probe.toml prompt {rel} cannot be read: {err}") from None


def _bullets(items: Sequence[str]) -> list[str]:
    return [f"  - {item}" for item in items] or ["  (nothing stated)"]


def _reruns_rule(reruns: int, nondeterminism_breaks: bool) -> str:
    """What the round is told about reruns (grader/candidates/ judges them)."""
    if reruns <= 1:
        return "A candidate is judged on one run on each tree."
    text = (
        f"A candidate must give the same outcome {reruns} times on each tree to be upheld; "
        "one whose outcome varies on State A is not counted."
    )
    if nondeterminism_breaks:
        return text + (
            " One that passes on State A every time and fails on the submission at first "
            "but not every time shows a submission that is not deterministic: it counts."
        )
    return text + " Nor is one whose outcome on the submission varies."


def opening(
    template: str,
    *,
    task: Task,
    probe: Probe,
    adversary: Adversary,
    budget_sec: float,
    commands: Sequence[str] = (),
) -> str:
    """The filled template plus the round's rules."""
    values = {
        "task": task.id,
        "focus": adversary.focus.strip(),
        "original": ORIGINAL_DIR,
        "submission": SUBMISSION_DIR,
        "workspace": SUBMISSION_DIR,
        "roots": f"original = {ORIGINAL_DIR}, submission = {SUBMISSION_DIR}",
        "commands": ", ".join(commands) if commands else "(none: read the trees; try_test runs)",
        "gates": "",
        "findings": "(no scan ran for this stage)",
    }
    text = render_prompt(template, values).rstrip()
    scope = probe.scope
    rules = ["", "SCOPE (a candidate outside it is not counted):", "", "IN SCOPE:"]
    rules += _bullets(scope.allow)
    rules += ["", "OUT OF SCOPE:", *_bullets(scope.deny)]
    if scope.deny_commands:
        rules += ["", "Commands a candidate must not use: " + ", ".join(scope.deny_commands)]
    focus = adversary.focus.strip()
    if focus:
        rules += [
            "",
            "THIS ROUND'S FOCUS:",
            f"  {focus}",
            "  Other rounds look elsewhere. Begin here; when this part is exhausted, go "
            "wherever the port looks weakest. The focus narrows where to look, never what "
            "counts.",
        ]
    rules += [
        "",
        f"Your budget is {budget_sec:g} seconds of wall-clock time. Turns and candidates are "
        "not limited; the clock and `report` are the only ways the round ends.",
        _reruns_rule(scope.reruns if scope.require_deterministic else 1,
                     probe.metadata.get("nondeterminism") == "break"),
        "",
        "Every path names its tree with a colon: `original:src/main.py` is State A, "
        "`submission:src/main.js` the port.",
    ]
    return text + "\n" + "\n".join(rules) + "\n"
