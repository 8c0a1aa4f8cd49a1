"""Stage III: a real client's round in its own lane (:mod:`.client_lane`), judged like any
other round (:func:`.verification_rounds.judge_report`)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any

from srb_tui.agents.errors import AdapterError, ClientError
from srb_tui.grader.envelope import utc_iso
from srb_tui.runner import RunnerError
from srb_tui.schema import Adversary

from .client_lane import (
    TAIL,
    ClientLanes,
    lane_cost,
    run_client_session,
    transcript_line,
)
from .common import StageFault
from .probe_prompt import PromptMissing
from .stage import StageContext
from .stage_container import StageContainer
from .transcripts import round_path, write_jsonl
from .verification_rounds import RoundResult, judge_report
from .verification_setup import ProbeSetup


async def client_round(
    ctx: StageContext,
    box: StageContainer,
    setup: ProbeSetup,
    adversary: Adversary,
    budget: float,
    *,
    lanes: ClientLanes,
    index: int,
) -> RoundResult:
    """A real client's round in its own lane (:mod:`.client_lane`). Its tries and report
    reach the lane's stored record as they happen (the console shows them live); the
    client's messages and tool calls, its cost and gateway latency when it ends."""
    started, clock = utc_iso(), time.monotonic()
    store, run_id, gateway = ctx.store, ctx.run_id, ctx.gateway
    if gateway is None:
        return RoundResult(adversary, "error", f"driver {adversary.driver!r} needs srb's model "
                           "gateway (see `srb doctor`)", started, 0.0)
    live = round_path(ctx.folder(), adversary.id)
    live.parent.mkdir(parents=True, exist_ok=True)
    live.write_text("", encoding="utf-8")

    seen: list[str] = []
    writes: list[asyncio.Task[None]] = []
    order = asyncio.Lock()

    async def show() -> None:
        async with order:
            await store.grading.record_adversary_round(
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
            box, setup, adversary, ctx.task, budget, original=ctx.original,
            submission=ctx.submission, lanes=lanes, gateway=gateway, run_id=run_id, slot=index,
            on_event=on_event,
        )  # fmt: skip
    except (ClientError, AdapterError, PromptMissing, RunnerError, StageFault) as err:
        return RoundResult(adversary, "error", f"client lane: {err}", started,
                           round(time.monotonic() - clock, 3))
    finally:
        await asyncio.gather(*writes, return_exceptions=True)
    write_jsonl(live, end.events)
    cost = lane_cost(await store.ledger.ledger_rows(run_id), index + 1)
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
        await judge_report(box, setup, result, end.report["files"],
                            str(end.report.get("claim") or ""), index)
    result.duration_sec = round(time.monotonic() - clock, 3)
    if result.outcome == "broken":
        result.extra["time_to_counterexample_sec"] = result.duration_sec
    return result


