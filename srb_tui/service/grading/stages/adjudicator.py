"""``[stages.verification.adjudicator]``: the model ruling on a break, after the mechanics.

A candidate upheld by the grader (passes on State A, fails on the submission, reproduces,
no tree-identity trick) is put to the adjudicator model with the task's scope lists: does
it assert on behaviour the task promised? The ruling comes through a ``rule`` tool
(:func:`srb_tui.drivers.ruling.run_ruling`: a few turns, no resumes). In scope: the break
stands. Out of scope: the candidate is rejected (the next upheld one, if any, is tried).
Undecided (the model could not be reached, or the driver cannot be built): the round is an
error — neither ten points paid for an outage nor ten taken on half a review. A task that
declares no adjudicator keeps the mechanical verdict; one with no scope rules needs no
ruling.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from srb_tui.drivers import DriverConfigError, make_driver
from srb_tui.drivers.loop import deadline_in
from srb_tui.drivers.ruling import run_ruling
from srb_tui.grader.candidates.records import counts_as_break
from srb_tui.schema import Probe, StageSpec

from .transcripts import write_jsonl

DEFAULT_TIMEOUT_SEC = 600.0
SYSTEM = (
    "You rule on one question about a repository migration: does a test that the original "
    "passes and the rewrite fails assert on behaviour the task promised, or on something "
    "that merely happened to be true of the original (iteration order nobody specified, "
    "the wording of diagnostics, timing, memory addresses, file layout, private names)? "
    "The task's own scope lists below take precedence over this general guidance. Judge "
    "the assertion the test makes, not the intent its author describes. Call `rule` once."
)


def adjudicator_options(spec: StageSpec) -> Mapping[str, Any] | None:
    table = spec.options.get("adjudicator")
    return table if isinstance(table, Mapping) and table.get("driver") else None


def scope_prompt(probe: Probe, candidate: Mapping[str, Any], claim: str) -> str:
    scope = probe.scope
    files = {str(k): str(v) for k, v in (candidate.get("files") or {}).items()}
    parts = ["The task declares this scope.", "", "IN SCOPE (the migration had to keep):"]
    parts += [f"  - {item}" for item in scope.allow] or ["  (nothing stated)"]
    parts += ["", "OUT OF SCOPE (not promised; a break on these is not upheld):"]
    parts += [f"  - {item}" for item in scope.deny] or ["  (nothing stated)"]
    parts += ["", "What the test's author says it shows:", claim.strip() or "(nothing said)"]
    for name, text in sorted(files.items()):
        parts += ["", f"The test, file {name}:", "```", text[:20000], "```"]
    runs = (candidate.get("verdict") or {}).get("runs") or []
    failing = next((r for r in runs if isinstance(r, dict) and r.get("role") == "submission"),
                   None)  # fmt: skip
    if failing:
        tail = (str(failing.get("stdout_tail", ""))[-1500:] + "\n"
                + str(failing.get("stderr_tail", ""))[-1500:]).strip()  # fmt: skip
        parts += ["", "How it fails on the submission:", "```", tail, "```"]
    parts += ["", "Rule on the assertion the code makes. Call `rule` once."]
    return "\n".join(parts)


async def rule_on_breaks(
    result: Any,
    *,
    spec: StageSpec,
    probe: Probe,
    run_dir: Path,
    environ: Mapping[str, str] | None,
    endpoint: Any = None,
    cwd: str | None = None,
) -> None:
    """Put ``result``'s upheld candidates (a RoundResult) to the adjudicator; adjust the
    candidates' verdicts and the round's outcome in place."""
    options = adjudicator_options(spec)
    if result.outcome != "broken" or options is None:
        return
    if not probe.scope.allow and not probe.scope.deny:
        result.extra["adjudication"] = "no scope rules declared: nothing is out of scope"
        return
    upheld = [c for c in result.candidates if counts_as_break(c.get("verdict"))]
    try:
        driver = make_driver(
            str(options["driver"]), str(options.get("model") or options["driver"]),
            dict(options.get("driver_options") or {}),
            api_key_env=options.get("api_key_env") if isinstance(
                options.get("api_key_env"), str) else None,
            program=[str(p) for p in options.get("program") or []] or None,
            environ=environ, cwd=cwd, endpoint=endpoint,
        )  # fmt: skip
    except DriverConfigError as err:
        result.outcome = "error"
        result.reason = f"a break was claimed and the adjudicator could not be set up: {err}"
        return
    timeout = options.get("timeout_sec")
    seconds = float(timeout) if isinstance(timeout, int | float) else DEFAULT_TIMEOUT_SEC
    rulings = []
    try:
        for index, candidate in enumerate(upheld, 1):
            prompt = scope_prompt(probe, candidate, str(candidate.get("claim") or result.reason))
            ruling = await run_ruling(driver, SYSTEM, prompt, deadline=deadline_in(seconds))
            write_jsonl(
                run_dir / "verification" / f"adjudication-{result.adversary.id}-{index}.jsonl",
                ruling.transcript,
            )
            rulings.append(ruling.to_dict() | {"transcript": None, "messages": None})
            verdict = candidate["verdict"]
            if ruling.in_scope is None:
                result.outcome = "error"
                result.reason = (
                    "a break was claimed and the adjudication did not complete: "
                    + (ruling.error or "no ruling")
                )
                return
            verdict["adjudication"] = {"in_scope": ruling.in_scope, "reason": ruling.ruling}
            if ruling.in_scope:
                result.reason = f"{verdict.get('reason', '')}; in scope: {ruling.ruling}"
                return
            verdict["outcome"] = "rejected"
            verdict["reason"] = f"out of scope (adjudicator): {ruling.ruling}"
        result.outcome = "survived"
        result.reason = "every break was ruled out of scope: " + "; ".join(
            str(r["ruling"]) for r in rulings
        )
    finally:
        result.extra["adjudication"] = rulings
        await driver.aclose()
