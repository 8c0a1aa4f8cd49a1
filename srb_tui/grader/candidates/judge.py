"""Stage III: adjudicate a counterexample candidate from its runs on both trees.

Adjudication, in the published order: a fault exit code (64–78 by default) on either side ⇒
invalid; the candidate must pass (exit 0) on State A ⇒ else invalid; it must fail on the
submission (a timeout there is a real failure) ⇒ else invalid (not a break); the pair must
reproduce `reruns` times (the order of the two runs is shuffled per attempt) ⇒ else rejected;
and it must be in scope (no tree-identity tricks, no denied commands; a static scan) ⇒ else
rejected. What survives is upheld (or goes to the model adjudicator when the stage has one).

Nondeterminism (issue 32). The published grader (Einsia/SWE-Refactor-Bench,
``infra/swerefactor/verification.py``, ``Adjudicator.adjudicate``) runs the pair once; only
when probe.toml's ``[scope].require_deterministic`` is true and ``reruns`` > 1 does it run
``reruns - 1`` further pairs (State A first each time), and the first pair that is not
again "passes on State A, fails on the submission" makes the candidate REJECTED ("the outcome
is not stable … cannot distinguish a defect from a flake"), a fault exit code INVALID. It
does not ask which side moved: a submission that fails some reruns and passes others is
rejected like a flaky candidate, and the round goes on (a survival when nothing else holds).
With ``require_deterministic = false`` one pair decides. srb matches that: the stage passes
``reruns = 1`` when the probe does not require determinism, and a task in the published
schema keeps the published scoring (``nondeterminism = "reject"``). But srb looks at which side
moved. State A failing a rerun is a flaky candidate: rejected, as today. State A passing every
attempt while the submission fails some and passes others is the submission behaving
differently from State A, which is deterministic for that candidate: the verdict is
``nondeterministic`` ("nondeterministic on the submission"), recorded as its own verdict
with every run, after all ``reruns`` attempts (so State A was seen to pass each one) and
the same scope scan. Under ``nondeterminism = "break"`` (srb's own tasks: probe.toml
``[metadata] nondeterminism = "break"``) it counts as a break, like ``upheld``; under the
published ``"reject"`` it is recorded and does not count. :func:`counts_as_break` is the
one rule every consumer (the fuzzer's round, the service, the adjudicator) asks. A caller
that has already seen the input fail on the submission (the fuzzer: ``seen_failing``) has
every attempt run even when the first passes there, so a port wrong only some of the time
cannot hide behind the run adjudication happened to start with.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..boundary import sandbox
from .env import allowed_names
from .records import (
    NONDETERMINISTIC,
    CandidateSpec,
    CandidateVerdict,
    RunObservation,
    counts_as_break,
)
from .run import boundary_on, run_once
from .scope import scan_candidate
from .staging import StagingError, check_original


def _describe(run: RunObservation) -> str:
    if run.start_error is not None:
        return f"could not start ({run.start_error})"
    if run.timed_out:
        return "timed out"
    if run.exit_code is not None and run.exit_code < 0:
        return f"killed by signal {-run.exit_code}"
    return f"exit {run.exit_code}"


def _orders(reruns: int) -> list[tuple[str, str]]:
    forward, backward = ("original", "submission"), ("submission", "original")
    orders = [forward]
    if reruns >= 2:
        orders.append(backward)
    orders += [secrets.choice([forward, backward]) for _ in range(reruns - len(orders))]
    first, rest = orders[0], orders[1:]
    rng = secrets.SystemRandom()
    rng.shuffle(rest)
    return [first, *rest]


def adjudicate(
    candidate_dir: str | os.PathLike[str],
    original: str | os.PathLike[str],
    submission: str | os.PathLike[str],
    spec: CandidateSpec,
    *,
    stage_base: str | os.PathLike[str] | None = None,
    name: str | None = None,
    on_run: Callable[[RunObservation], None] | None = None,
    seen_failing: bool = False,
) -> CandidateVerdict:
    """Run and judge one candidate. Never raises for candidate behaviour; a staging or
    start failure of the harness's own command is an ``error`` verdict. ``on_run`` sees
    each execution as it ends (progress only; the verdict is the return value).
    ``seen_failing``: the caller has already seen this input fail on the submission while
    State A gave the expected answer (the fuzzer's difference, observed before the candidate
    was written); a first attempt that passes on the submission then does not end it: every
    attempt runs, and a submission that fails some of them while State A passes all is
    nondeterministic, one that passes all of them is "passes on the submission too"."""
    trees = {"original": Path(original).resolve(), "submission": Path(submission).resolve()}
    candidate_path = Path(candidate_dir).resolve()
    for label, path in (*trees.items(), ("candidate", candidate_path)):
        if not path.is_dir():
            return CandidateVerdict("error", f"{label} folder {path} does not exist")
    base = Path(stage_base) if stage_base is not None else Path(tempfile.gettempdir())
    stage_root = base / secrets.token_hex(8)
    runs: list[RunObservation] = []
    try:
        check_original(spec, trees["original"], "State A")
        base.mkdir(parents=True, exist_ok=True)
        if sandbox.enabled():
            sandbox.join_slot_groups([spec.slot])
            if boundary_on(spec):
                os.setgroups(sorted({*os.getgroups(), sandbox.candidate_group(spec.slot)}))
            sandbox.give_to_slot(base, spec.slot)
        stage_root.mkdir(parents=True)
        for attempt, order in enumerate(_orders(max(1, spec.reruns)), start=1):
            pair: dict[str, RunObservation] = {}
            for role in order:
                run = run_once(
                    spec, trees[role], candidate_path, stage_root, role, attempt,
                    name or candidate_path.name,
                )
                runs.append(run)
                if on_run is not None:
                    on_run(run)
                pair[role] = run
                if run.start_error is not None:
                    said = run.stderr_tail.strip().splitlines()[-1:] or [""]
                    return CandidateVerdict(
                        "error",
                        f"candidate command could not start: {run.start_error} {said[0]}".strip(),
                        runs,
                    )
            verdict = _judge_pair(pair, attempt, spec, seen_failing)
            if verdict is not None:
                return CandidateVerdict(verdict[0], verdict[1], runs)
    except StagingError as exc:
        return CandidateVerdict("error", str(exc), runs)
    except OSError as exc:
        return CandidateVerdict("error", f"cannot prepare {stage_root}: {exc}", runs)
    finally:
        shutil.rmtree(stage_root, ignore_errors=True)
    mine = [run for run in runs if run.role == "submission"]
    if all(run.passed for run in mine):  # only when seen_failing kept attempt 1 going
        return CandidateVerdict("invalid", (
            f"passes on the submission too: not a break (all {len(mine)} attempts, though "
            "the fuzzer had seen this input fail there)"), runs)
    findings = scan_candidate(
        candidate_path,
        deny_commands=spec.deny_commands,
        original=trees["original"],
        submission=trees["submission"],
        allowed_env=allowed_names(spec.command, spec.env),
    )
    if findings:
        first = findings[0]
        where = f"{first.path}:{first.line}" if first.line else first.path
        return CandidateVerdict("rejected", f"out of scope: {first.rule} ({where})", runs, findings)
    moved = [run.attempt for run in mine if run.passed]
    if moved:
        return _nondeterministic(spec, runs, moved)
    reason = "passes on State A and fails on the submission"
    if any(run.timed_out for run in runs if run.role == "submission"):
        reason += " (times out on the submission: a real asymmetry)"
    return CandidateVerdict("upheld", f"{reason}, reproduced {max(1, spec.reruns)} times", runs)


def _nondeterministic(
    spec: CandidateSpec, runs: Sequence[RunObservation], moved: Sequence[int]
) -> CandidateVerdict:
    """State A passed every attempt; the submission failed some and passed ``moved``."""
    moved = sorted(moved)
    attempts = max(1, spec.reruns)
    failed = [run.attempt for run in runs if run.role == "submission" and not run.passed]
    counts = spec.nondeterminism == "break"
    reason = (
        f"nondeterministic on the submission: State A passed all {attempts} attempts, the "
        f"submission failed attempt{'s' if len(failed) > 1 else ''} "
        f"{', '.join(map(str, failed))} and passed {', '.join(map(str, moved))} of the same "
        "candidate; "
        + (
            "a difference from State A (the task counts nondeterminism as behaviour)"
            if counts
            else "not counted (the published grader rejects an outcome that is not stable)"
        )
    )
    return CandidateVerdict(NONDETERMINISTIC, reason, list(runs), counts=counts)


def _judge_pair(
    pair: Mapping[str, RunObservation], attempt: int, spec: CandidateSpec,
    seen_failing: bool = False,
) -> tuple[str, str] | None:
    """None while the pair still looks like a break (or, ``seen_failing``, may yet show
    one); else (outcome, reason)."""
    a, b = pair["original"], pair["submission"]
    for run in (a, b):
        if not run.timed_out and run.exit_code in spec.fault_exit_codes:
            return "invalid", (
                f"fault exit code {run.exit_code} on the {run.role} (attempt {attempt}): "
                "the candidate reported its own fault"
            )
    if spec.behaviour_only and ran_no_program(a) and ran_no_program(b):
        return "invalid", (
            f"{DID_NOT_RUN} (attempt {attempt}): the exec boundary started no program of the "
            "tree on either side; a counterexample observes the tree only through the "
            "programs it starts"
        )
    if attempt == 1:
        if not a.passed:
            return "invalid", f"does not pass on State A ({_describe(a)})"
        if b.passed and not seen_failing:
            return "invalid", "passes on the submission too: not a break"
        return None
    if not a.passed:  # State A moved: the candidate itself is flaky
        return "rejected", (
            f"not reproducible: attempt {attempt} gave original {_describe(a)}, "
            f"submission {_describe(b)}"
        )
    return None  # the submission passing here is judged once every attempt has run


DID_NOT_RUN = "did not run the program"


def ran_no_program(run: RunObservation) -> bool:
    """True when the exec boundary watched ``run`` and started no program of the tree in
    it (False when there was no boundary to tell)."""
    if run.boundary is None:
        return False
    started = run.boundary.get("started", run.boundary.get("programs"))
    return started == 0


def adversary_outcome(
    verdicts: Sequence[CandidateVerdict], harness_error: str | None = None
) -> str:
    """broken (a candidate counts as a break) | error (harness fault, no break) | survived."""
    if any(counts_as_break(verdict) for verdict in verdicts):
        return "broken"
    if harness_error or any(verdict.outcome == "error" for verdict in verdicts):
        return "error"
    return "survived"


def parse_exit_codes(text: str) -> frozenset[int]:
    """'64-78' or '1,2,64-78' -> a set of exit codes."""
    codes: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        start, stop = int(low), int(high or low)
        if stop < start:
            raise ValueError(f"bad exit-code range {part!r}")
        codes.update(range(start, stop + 1))
    return frozenset(codes)
