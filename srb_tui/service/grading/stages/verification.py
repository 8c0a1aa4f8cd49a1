"""Stage III: the adversaries of probe.toml, each a round that hunts for one counterexample.

All rounds share one verification container (both toolchains, both trees read-only, the
probe folder under /tests) and run concurrently up to a limit. A ``fuzz`` adversary is the
grader's model-free fuzzer, run inside the container to its budget; ``scripted``,
``anthropic`` and ``openai`` adversaries run `run_adversary_round` on the host with a
channel whose reading tools and ``try_test`` execute in the container. Every candidate, from
either kind, is judged by the same grader adjudication (reruns, fault codes, scope), and
every judged candidate is recorded as a counterexample with its code, both sides' output,
exit codes and durations. Outcome per adversary: broken | survived | error.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui.agents.errors import AdapterError, ClientError
from srb_tui.drivers import (
    ChannelError,
    DriverConfigError,
    make_driver,
    run_adversary_round,
)
from srb_tui.drivers.loop import deadline_in
from srb_tui.gateway import Gateway, driver_endpoint
from srb_tui.grader.candidate import NONDETERMINISTIC, counts_as_break
from srb_tui.grader.envelope import StageEnvelope, atomic_write_json, utc_iso
from srb_tui.grader.lockdown import tree_digest
from srb_tui.runner import DockerEngine, RunnerError
from srb_tui.runner.files import fetch_file
from srb_tui.schema import Adversary, StageSpec, Task
from srb_tui.service.events import Progress
from srb_tui.service.verification_events import AdversaryRoundEnded
from srb_tui.store import Store

from . import fuzz_domains
from .adjudicator import adjudicator_options, rule_on_breaks
from .channels import AdversaryChannel, adjudicate_in
from .client_lane import (
    TAIL,
    ClientLanes,
    is_client_driver,
    lane_cost,
    lane_limit,
    run_client_session,
    transcript_line,
)
from .common import Publish, StageFault, StageImages, StageOutcome, option_str, tests_dir
from .counterexamples import counterexample_fields
from .probe_prompt import ADVERSARY_EXPECTATIONS as ADVERSARY_EXPECTATIONS
from .probe_prompt import ADVERSARY_SYSTEM, PromptMissing, opening, read_probe_prompt
from .round_rules import not_attacked
from .stage_container import StageContainer
from .stage_layout import (
    CANDIDATES,
    ORIGINAL_DIR,
    SCRATCH,
    STAGE_BASE,
    SUBMISSION_DIR,
    candidate_layout,
    container_path,
)
from .transcripts import round_path, write_jsonl
from .verification_setup import (
    ProbeSetup,
    allowed_commands,
    probe_setup,
)

DEFAULT_PARALLEL = 6
JUDGED = ("upheld", NONDETERMINISTIC, "invalid", "rejected")
"""The verdicts a counterexample is stored with (an ``error`` is a note of the round)."""


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


async def _fuzz_round(
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


async def _model_round(
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
        await _judge_report(box, setup, result, transcript.candidate, claim, index)
    result.duration_sec = round(time.monotonic() - clock, 3)
    return result


async def _judge_report(
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


async def _client_round(
    box: StageContainer,
    setup: ProbeSetup,
    adversary: Adversary,
    task: Task,
    budget: float,
    run_dir: Path,
    *,
    trees: tuple[Path, Path],
    lanes: ClientLanes,
    gateway: Gateway | None,
    run_id: str,
    index: int,
    store: Store,
) -> RoundResult:
    """A real client's round in its own lane (:mod:`.client_lane`). Its tries and report
    reach the lane's stored record as they happen (the console shows them live); the
    client's messages and tool calls, its cost and gateway latency when it ends."""
    started, clock = utc_iso(), time.monotonic()
    if gateway is None:
        return RoundResult(adversary, "error", f"driver {adversary.driver!r} needs srb's model "
                           "gateway (see `srb doctor`)", started, 0.0)
    live = round_path(run_dir, adversary.id)
    live.parent.mkdir(parents=True, exist_ok=True)
    live.write_text("", encoding="utf-8")

    seen: list[str] = []
    writes: list[asyncio.Task[None]] = []
    order = asyncio.Lock()

    async def show() -> None:
        async with order:
            await store.record_adversary_round(
                run_id, adversary.id, status="running", model=adversary.model,
                driver=adversary.driver, focus=adversary.focus or None, started_at=started,
                extra={"transcript_tail": seen[-TAIL:]},
            )  # fmt: skip

    def on_event(event: Mapping[str, Any]) -> None:
        with live.open("a", encoding="utf-8") as handle:  # the lane's live transcript
            handle.write(json.dumps(dict(event), default=str) + "\n")
        line = transcript_line(event)
        if line:
            seen.append(line)
            writes.append(asyncio.get_running_loop().create_task(show()))

    try:
        end = await run_client_session(
            box, setup, adversary, task, budget, original=trees[0], submission=trees[1],
            lanes=lanes, gateway=gateway, run_id=run_id, slot=index, on_event=on_event,
        )  # fmt: skip
    except (ClientError, AdapterError, PromptMissing, RunnerError, StageFault) as err:
        return RoundResult(adversary, "error", f"client lane: {err}", started,
                           round(time.monotonic() - clock, 3))
    finally:
        await asyncio.gather(*writes, return_exceptions=True)
    write_jsonl(live, end.events)
    cost = lane_cost(await store.ledger_rows(run_id), index + 1)
    result = RoundResult(
        adversary, "survived",
        "the session ended without a report" if not end.timed_out
        else f"no report within the {budget:g} s session", started, 0.0,
        notes=[f"refused: {r}" for r in end.refused],
        extra={
            "client": adversary.driver, "exit_code": end.exit_code,
            "timed_out": end.timed_out, "tries": len(end.tries), "try_results": end.tries,
            "tool_calls": sum(1 for e in end.events if e.get("kind") == "tool_call"),
            **end.usage, **cost,
            "transcript_tail": [t for t in map(transcript_line, end.events) if t][-TAIL:],
        },
    )  # fmt: skip
    refused = cost.get("refused_requests", 0)
    if end.error is not None and end.report is None:
        result.outcome, result.reason = "error", end.error
    elif end.report is None and refused and cost.get("last_status", 200) >= 400:
        result.outcome = "error"
        result.reason = (f"the gateway refused {refused} of the session's requests (last "
                         f"HTTP {cost['last_status']}); a refused session is no survival")
    elif end.report is not None:
        await _judge_report(box, setup, result, end.report["files"],
                            str(end.report.get("claim") or ""), index)
    result.duration_sec = round(time.monotonic() - clock, 3)
    if result.outcome == "broken":
        result.extra["time_to_counterexample_sec"] = result.duration_sec
    return result


async def _adjudicate_breaks(
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


async def _record(store: Store, run_id: str, result: RoundResult) -> list[dict[str, Any]]:
    """Store the round and its counterexamples; the breaks it contributes."""
    breaks = []
    notes = list(result.notes)
    for candidate in result.candidates:
        fields = counterexample_fields(candidate)
        if fields["verdict"] not in JUDGED:
            notes.append(f"a candidate could not be judged: {fields['reason']}")
            continue
        record = await store.record_counterexample(run_id, result.adversary.id, **fields)
        if fields["extra"]["counts_as_break"]:
            breaks.append(
                {
                    "adversary": result.adversary.id,
                    "counterexample": record.id,
                    "reason": record.reason,
                }
            )
    if result.reason:
        notes.insert(0, result.reason)
    moved = sum(1 for c in result.candidates
                if (c.get("verdict") or {}).get("outcome") == NONDETERMINISTIC)
    if moved:  # issue 32: the round's record says so, not only its counterexamples
        result.extra["nondeterministic"] = moved
    await store.record_adversary_round(
        run_id,
        result.adversary.id,
        status=result.outcome,
        model=result.adversary.model,
        driver=result.adversary.driver,
        focus=result.adversary.focus or None,
        started_at=result.started_at,
        duration_sec=result.duration_sec,
        candidates=len(result.candidates),
        notes=notes,
        extra=result.extra,
    )
    return breaks


async def run_verification(
    *,
    engine: DockerEngine,
    store: Store,
    run_id: str,
    task: Task,
    original: Path,
    submission: Path,
    run_dir: Path,
    images: StageImages,
    publish: Publish,
    budget_override: float | None = None,
    max_parallel: int = DEFAULT_PARALLEL,
    environ: Mapping[str, str] | None = None,
    gateway: Gateway | None = None,
) -> StageOutcome:
    """Run every adversary of probe.toml; record rounds and counterexamples."""
    assert task.evaluation is not None and task.evaluation.verification is not None
    spec = task.evaluation.verification
    setup = probe_setup(task, spec)
    image = await images.get("verification")
    envelope = StageEnvelope(stage="verification", task=task.id)
    results: list[RoundResult] = []
    lanes = max(1, min(len(setup.probe.adversaries), max_parallel))
    setup = dataclasses.replace(
        setup,
        candidates=dataclasses.replace(
            setup.candidates,
            original_digest=await asyncio.to_thread(tree_digest, original),
            lanes=lanes,  # candidate runs take turns on the run lease
        ),
    )
    layout = candidate_layout(len(setup.probe.adversaries))
    async with StageContainer(
        engine, run_id, "verification", image.tag, publish=publish, store=store,
        layout=layout, task=task,
    ) as box:
        await box.put_trees(original, submission)
        await box.put_context(task, [option_str(spec, "context", spec.name), setup.folder])
        limit = asyncio.Semaphore(max(1, max_parallel))
        clients = sum(1 for a in setup.probe.adversaries if is_client_driver(a.driver))
        client_limit = asyncio.Semaphore(lane_limit(
            float(box.grading["cpus"]), int(box.grading["memory_mb"]), clients))
        client_lanes = ClientLanes(engine, gateway, run_id, dict(box.spec.labels))
        lane_breaks: dict[str, list[dict[str, Any]]] = {}

        async def one(index: int, adversary: Adversary) -> RoundResult:
            budget = budget_override if budget_override is not None else adversary.budget_sec
            async with limit:
                await store.record_adversary_round(
                    run_id,
                    adversary.id,
                    status="running",
                    model=adversary.model,
                    driver=adversary.driver,
                    focus=adversary.focus or None,
                    started_at=utc_iso(),
                )
                publish(Progress(run_id, f"verification: {adversary.id} started ({budget:g} s)"))
                try:
                    if adversary.driver == "fuzz":
                        result = await _fuzz_round(box, setup, adversary, index, budget)
                    elif is_client_driver(adversary.driver):
                        async with client_limit:
                            result = await _client_round(
                                box, setup, adversary, task, budget, run_dir,
                                trees=(original, submission), lanes=client_lanes, gateway=gateway,
                                run_id=run_id, index=index, store=store,
                            )  # fmt: skip
                    else:
                        result = await _model_round(
                            box, setup, adversary, task, spec, budget, run_dir, environ,
                            await driver_endpoint(gateway, run_id, "adversary", adversary.driver),
                            index,
                        )
                except (StageFault, RunnerError, ValueError, OSError) as err:
                    result = RoundResult(adversary, "error", f"harness: {err}", utc_iso(), 0.0)
                await _adjudicate_breaks(result, spec, setup, run_dir, environ, gateway, run_id)
                flag_early_survival(result, budget)
                # Live lanes: the round is stored (with its counterexamples) as it ends, so
                # the console shows it while the other lanes still run.
                lane_breaks[adversary.id] = await _record(store, run_id, result)
                publish(AdversaryRoundEnded(run_id, adversary.id, result.outcome,
                                            result.duration_sec, len(result.candidates)))
                publish(Progress(run_id, f"verification: {adversary.id} {result.outcome}"))
                return result

        try:
            results = list(
                await asyncio.gather(*(one(i, a) for i, a in enumerate(setup.probe.adversaries)))
            )
        finally:
            await client_lanes.aclose()
    breaks: list[dict[str, Any]] = []
    for result in results:
        breaks.extend(lane_breaks.get(result.adversary.id, []))
        envelope.units.append(
            {
                "id": result.adversary.id,
                "driver": result.adversary.driver,
                "model": result.adversary.model,
                "focus": result.adversary.focus,
                "status": result.outcome,
                "reason": result.reason,
                "duration_sec": result.duration_sec,
                "candidates": len(result.candidates),
                "upheld": sum(
                    1
                    for c in result.candidates
                    if (c.get("verdict") or {}).get("outcome") == "upheld"
                ),
                # issue 32: a submission that gave different results for one candidate
                # while State A did not (a break where the task counts it)
                "nondeterministic": sum(
                    1
                    for c in result.candidates
                    if (c.get("verdict") or {}).get("outcome") == NONDETERMINISTIC
                ),
                **result.extra,
            }
        )
        envelope.checks.append(
            {
                "id": result.adversary.id,
                "verdict": {"survived": "pass", "broken": "fail"}.get(result.outcome, "error"),
                "summary": result.reason,
            }
        )
    outcomes = {r.adversary.id: r.outcome for r in results}
    errored = [r for r in results if r.outcome == "error"]
    envelope.metadata = {
        "adversaries": outcomes,
        "models_survived": sum(1 for o in outcomes.values() if o == "survived"),
        "models_broken": sum(1 for o in outcomes.values() if o == "broken"),
        "models_errored": len(errored),
        "candidate_command": list(setup.candidates.command),
        "reruns": setup.candidates.reruns,
        "budget_override_sec": budget_override,
    }
    for result in errored:
        envelope.notes.append(f"{result.adversary.id}: {result.reason}")
    envelope.finish("error" if errored else "ok")
    harness_error = None
    if errored:
        harness_error = "verification: " + "; ".join(
            f"{r.adversary.id}: {r.reason}" for r in errored
        )
    return StageOutcome(
        stage="verification",
        status=envelope.status,
        envelope=envelope.to_dict(),
        harness_error=harness_error,
        adversaries=outcomes,
        breaks=breaks,
    )
