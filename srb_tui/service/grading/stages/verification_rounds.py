"""Stage III's rounds that run on the host or in the verification container: the fuzzer's
and a model's (SDK or scripted driver), the judging of a reported candidate, the model
adjudicator's ruling on a break, and the early-survival flag. A real client's round is in
:mod:`.verification_client`; storing a round in :mod:`.verification_record`."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui.drivers import (
    ChannelError,
    DriverConfigError,
    make_driver,
    run_adversary_round,
)
from srb_tui.drivers.loop import deadline_in
from srb_tui.gateway import Gateway, driver_endpoint
from srb_tui.grader.candidates.records import counts_as_break
from srb_tui.grader.envelope import atomic_write_json, utc_iso
from srb_tui.runner.files import fetch_file
from srb_tui.schema import Adversary, StageSpec, Task

from . import fuzz_domains
from .adjudicator import adjudicator_options, rule_on_breaks
from .channels import AdversaryChannel, adjudicate_in
from .common import tests_dir
from .probe_prompt import ADVERSARY_SYSTEM, PromptMissing, opening, read_probe_prompt
from .round_rules import not_attacked
from .stage_container import StageContainer
from .stage_layout import (
    CANDIDATES,
    ORIGINAL_DIR,
    SCRATCH,
    STAGE_BASE,
    SUBMISSION_DIR,
    container_path,
)
from .transcripts import round_path, write_jsonl
from .verification_setup import (
    ProbeSetup,
    allowed_commands,
)


@dataclass
class RoundResult:
    """One adversary's round, ready to record."""

    adversary: Adversary
    outcome: str
    reason: str
    started_at: str
    duration_sec: float
    candidates: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


async def fuzz_round(
    box: StageContainer, setup: ProbeSetup, adversary: Adversary, index: int, budget: float
) -> RoundResult:
    meta = setup.probe.metadata
    started, clock = utc_iso(), time.monotonic()
    entry, seeds = meta.get("fuzz_entry"), meta.get("fuzz_seeds")
    if fuzz_domains.is_http(meta):
        entry = "(http)"
    if not isinstance(entry, str) or not isinstance(seeds, str):
        return RoundResult(
            adversary,
            "error",
            'probe.toml [metadata] needs fuzz_entry and fuzz_seeds for driver "fuzz"',
            started,
            0.0,
        )
    build_problem = fuzz_domains.build_problem(meta)
    if build_problem is not None:
        return RoundResult(adversary, "error", build_problem, started, 0.0)
    seed = adversary.metadata.get("seed", index + 1)
    rate = adversary.metadata.get("argv_mutation_rate", 0.1)
    work = f"{SCRATCH}/fuzz/{adversary.id}"

    def inside(rel: str) -> str:
        return container_path(f"{setup.folder}/{rel}" if setup.folder else rel)

    domain = fuzz_domains.http_args(meta, inside) if fuzz_domains.is_http(meta) else None
    if isinstance(domain, str):
        return RoundResult(adversary, "error", domain, started, 0.0)
    args = [
        "fuzz" if domain is None else "fuzz-http",
        "--adversary", adversary.id,
        "--original", ORIGINAL_DIR,
        "--submission", SUBMISSION_DIR,
        *(["--seeds", inside(seeds), "--entry", entry] if domain is None else domain),
        "--seed", str(int(seed)) if isinstance(seed, int | float) else "0",
        "--budget", f"{budget:g}",
        "--run-timeout", f"{setup.run_timeout_sec:g}",
        *(["--argv-mutation-rate", f"{float(rate) if isinstance(rate, int | float) else 0.1:g}",
           *fuzz_domains.cli_token_args(meta)] if domain is None else []),
        "--work", work,
        "--result", f"{work}/result.json",
        "--slot", str(index),
        "--stage-base", f"{STAGE_BASE}/{index}/fuzz",
        *setup.candidates.args(),
    ]  # fmt: skip
    argv_file = meta.get("fuzz_argv")
    if isinstance(argv_file, str) and domain is None:
        args += ["--argv-file", inside(argv_file)]
    build, build_sec = meta.get("fuzz_build"), fuzz_domains.build_timeout(meta)
    if isinstance(build, str):
        args += ["--build", inside(build), "--build-timeout", f"{build_sec:g}"]
    ceiling = budget * 1.25 + setup.candidates.exec_budget_sec() + 60
    ceiling += 2 * build_sec if isinstance(build, str) else 0
    res = await box.grader(args, timeout_sec=ceiling)
    duration = round(time.monotonic() - clock, 3)
    if res.exit_code != 0 or res.timed_out:
        tail = res.stderr.decode("utf-8", "replace").strip()[-500:]
        return RoundResult(
            adversary,
            "error",
            f"the fuzzer did not finish ({res.describe()}); a round counts only from a grader "
            f"that exited 0: {tail}",
            started,
            duration,
        )
    raw = await fetch_file(box.engine, box.h, f"{work}/result.json")
    if raw is None:
        return RoundResult(adversary, "error", "the fuzzer exited 0 without a result",
                           started, duration)
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        return RoundResult(adversary, "error", f"the fuzzer's result is not JSON: {err}",
                           started, duration)
    if not isinstance(doc, dict):
        return RoundResult(adversary, "error", "the fuzzer's result is not an object",
                           started, duration)
    outcome = doc.get("outcome")
    if outcome not in ("broken", "survived", "error"):
        outcome = "error"
    return RoundResult(
        adversary,
        str(outcome),
        str(doc.get("reason", "")),
        started,
        duration,
        candidates=[c for c in doc.get("candidates", []) if isinstance(c, dict)],
        notes=[str(n) for n in doc.get("notes", [])],
        extra={
            key: doc.get(key)
            for key in ("seed", "iterations", "executions", "differences", "corpus_size")
        }
        | {"budget_sec": budget},
    )


async def model_round(
    box: StageContainer,
    setup: ProbeSetup,
    adversary: Adversary,
    task: Task,
    spec: StageSpec,
    budget: float,
    run_dir: Path,
    environ: Mapping[str, str] | None,
    endpoint: Any = None,
    index: int = 0,
) -> RoundResult:
    started, clock = utc_iso(), time.monotonic()
    program = adversary.metadata.get("program") or spec.options.get("adversary_program")
    api_key_env = adversary.metadata.get("api_key_env") or spec.options.get("api_key_env")
    try:
        driver = make_driver(
            adversary.driver,
            adversary.model,
            dict(adversary.driver_options),
            api_key_env=api_key_env if isinstance(api_key_env, str) else None,
            program=[str(p) for p in program] if isinstance(program, list | tuple) else None,
            environ=environ,
            cwd=str(tests_dir(task)),
            endpoint=endpoint,
        )
    except DriverConfigError as err:
        return RoundResult(adversary, "error", f"adversary driver: {err}", started, 0.0)
    try:
        template = read_probe_prompt(task, setup.folder, setup.probe.prompt)
    except PromptMissing as err:
        return RoundResult(adversary, "error", str(err), started, 0)
    commands = allowed_commands(setup.probe.metadata)
    prompt = opening(
        template, task=task, probe=setup.probe, adversary=adversary, budget_sec=budget,
        commands=commands,
    )  # fmt: skip
    channel = AdversaryChannel(
        box, setup.candidates, adversary.id, slot=index, allowed_commands=commands
    )
    try:
        transcript = await run_adversary_round(
            driver,
            channel,
            ADVERSARY_SYSTEM,
            prompt,
            adversary_id=adversary.id,
            deadline=deadline_in(budget),
            allowed_commands=commands,
        )
    finally:
        await channel.aclose()
        await driver.aclose()
    atomic_write_json(run_dir / f"verification-{adversary.id}.json", transcript.to_dict())
    write_jsonl(round_path(run_dir, adversary.id), transcript.to_dict().get("transcript", []))
    result = RoundResult(
        adversary,
        "survived",
        transcript.reason or transcript.status,
        started,
        0.0,
        extra={
            "status": transcript.status,
            "ending": transcript.ending,
            "tries": len(transcript.tries),
            "turns": transcript.turns,
            "input_tokens": transcript.usage.input_tokens,
            "output_tokens": transcript.usage.output_tokens,
            "tool_calls": transcript.tool_calls,
            "tool_errors": transcript.tool_errors,
            "resumes": transcript.resumes,
        },
    )
    unattacked = not_attacked(transcript.tool_calls, transcript.tool_errors, transcript.tries)
    if transcript.status == "error":
        result.outcome, result.reason = "error", transcript.reason
    elif transcript.status != "reported" and unattacked:
        result.outcome = "error"
        result.reason = (
            f"the round could not attack the submission ({unattacked}); it pays nothing"
        )
    elif transcript.status == "reported" and transcript.candidate:
        claim = str((transcript.report or {}).get("claim") or "")
        await judge_report(box, setup, result, transcript.candidate, claim, index)
    result.duration_sec = round(time.monotonic() - clock, 3)
    return result


async def judge_report(
    box: StageContainer,
    setup: ProbeSetup,
    result: RoundResult,
    files: Mapping[str, str],
    claim: str,
    index: int,
) -> None:
    """Adjudicate a round's reported candidate; the round's outcome from its verdict."""
    adversary = result.adversary
    folder = f"{CANDIDATES}/reported/{adversary.id}"
    # Judged under tokens the round never saw (a salt of its own, so fresh SRB_WORK
    # too): a candidate that hard-codes State A's token, learnt from a try_test's
    # output, cannot pass on State A.
    reported = dataclasses.replace(
        setup.candidates, token_salt_file=f"{SCRATCH}/reported-{adversary.id}.salt"
    )
    try:
        verdict = await adjudicate_in(box, reported, dict(files), folder, slot=index)
    except ChannelError as err:
        result.outcome, result.reason = "error", f"adjudicating the reported candidate: {err}"
        return
    result.candidates.append({"files": dict(files), "verdict": verdict, "claim": claim})
    result.outcome = "broken" if counts_as_break(verdict) else "survived"
    if verdict.get("outcome") == "error":
        result.outcome = "error"
    result.reason = str(verdict.get("reason", ""))


async def adjudicate_breaks(
    result: RoundResult,
    spec: StageSpec,
    setup: ProbeSetup,
    run_dir: Path,
    environ: Mapping[str, str] | None,
    gateway: Gateway | None,
    run_id: str,
) -> None:
    """The model adjudicator's ruling on a broken round's upheld candidates (when the
    stage declares one; see :mod:`.adjudicator`)."""
    options = adjudicator_options(spec)
    if result.outcome != "broken" or options is None:
        return
    endpoint = await driver_endpoint(gateway, run_id, "adjudicator", str(options["driver"]))
    await rule_on_breaks(
        result, spec=spec, probe=setup.probe, run_dir=run_dir, environ=environ,
        endpoint=endpoint,
    )  # fmt: skip


EARLY_SHARE = 0.5


def flag_early_survival(result: RoundResult, budget: float) -> None:
    """A survival that ends far inside its budget is noted (and marked in the round's
    extra): an adversary that stopped looking is not evidence of a faithful port."""
    if result.outcome != "survived" or budget <= 0:
        return
    if result.duration_sec < EARLY_SHARE * budget:
        result.extra["early_survival"] = True
        result.notes.append(
            f"survived after {result.duration_sec:g} s of a {budget:g} s budget "
            f"(under {EARLY_SHARE:.0%}): the round stopped early"
        )


