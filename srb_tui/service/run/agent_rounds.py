"""The container side of the round loop: start a round, follow its stream, finish it.

:class:`ContainerRounds` implements :class:`srb_tui.agents.rounds.RoundIO` for one run.
Rounds run as detached execs of the round wrapper (:mod:`srb_tui.agents.wrapper`); their
stdout reaches the store through the container's log, and :meth:`on_lines` (called by the
log sink after each stored batch) turns it into transcript events. A round is over when
its exit marker has been stored. A resumed srb rebuilds the unfinished round's events
from its stored log lines and goes on following.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from srb_tui.agents.adapters import (
    AGENT_DIR,
    ROUNDS_DIR,
    ClientAdapter,
    Endpoint,
    MiniSweAgentAdapter,
)
from srb_tui.agents.rounds import CONTINUE, PromptKind, RoundRecord
from srb_tui.agents.streams import (
    AgentEvent,
    RoundSummary,
    StreamParser,
    parse_trajectory,
)
from srb_tui.agents.wrapper import parse_marker
from srb_tui.runner import ContainerHandle, DockerEngine
from srb_tui.runner.rounds_exec import exec_detached, fetch_file, is_running, put_files
from srb_tui.service.agent_events import AgentRoundFinished, AgentRoundStarted, AgentTranscript
from srb_tui.service.events import EventBus
from srb_tui.service.run.model_access import ModelAccess
from srb_tui.store import Store, utc_now

POLL_SEC = 2.0
START_GRACE_SEC = 20.0
RAW_MAX_BYTES = 512 * 1024 * 1024
# Docker's json-file log splits a line longer than this into pieces of exactly this size.
DOCKER_PARTIAL = 16 * 1024


@dataclass
class _Live:
    """The round being streamed: its parser, partial line and exit."""

    number: int
    parser: StreamParser
    done: asyncio.Event
    exit_code: int | None = None
    partial: str = ""

    def feed(self, text: str) -> list[AgentEvent]:
        """One stored log line; pieces of a line Docker split are joined first."""
        if len(text) == DOCKER_PARTIAL:
            self.partial += text
            return []
        whole, self.partial = self.partial + text, ""
        return self.parser.feed(whole)


class ContainerRounds:
    """Rounds of one run in its agent container."""

    def __init__(
        self,
        *,
        store: Store,
        engine: DockerEngine,
        bus: EventBus,
        access: ModelAccess,
        run_id: str,
        handle: ContainerHandle,
        adapter: ClientAdapter,
        endpoint: Endpoint,
        instruction: str,
        raw_dir: Path,
        user: str,
        say: Callable[[str], None],
    ) -> None:
        self.store, self.engine, self.bus, self.access = store, engine, bus, access
        self.run_id, self.handle, self.adapter = run_id, handle, adapter
        self.endpoint = endpoint
        self.instruction, self.raw_dir, self.user, self.say = instruction, raw_dir, user, say
        self._live: dict[int, _Live] = {}
        self._current: int | None = None
        self._lock = asyncio.Lock()

    async def prime(self) -> None:
        """Before the log follower starts: rebuild an unfinished round's parser state."""
        pending = await self.unfinished_round()
        if pending is not None:
            await self._rebuild(pending)

    # -- RoundIO ---------------------------------------------------------------------------

    def note(self, text: str) -> None:
        self.say(text)

    async def over_budget(self) -> str | None:
        return await self.access.over_budget(self.run_id)

    async def finished_rounds(self) -> list[RoundRecord]:
        return [_record(r) for r in await self.store.agent.agent_rounds(self.run_id) if r.finished]

    async def unfinished_round(self) -> int | None:
        rounds = await self.store.agent.agent_rounds(self.run_id)
        if rounds and not rounds[-1].finished:
            return rounds[-1].round
        return None

    async def _session_id(self) -> str | None:
        for r in reversed(await self.store.agent.agent_rounds(self.run_id)):
            if r.session_id:
                return r.session_id
        return None

    async def start_round(self, number: int, prompt: str, budget_sec: float,
                          kind: PromptKind = "continue") -> None:
        """Start round ``number``: ``kind`` "continue" resumes the last session with
        ``prompt``; "fresh" starts a new session with ``prompt`` (which carries the
        instruction); without a session to resume the instruction is sent."""
        session = (await self._session_id()
                   if self.adapter.resumable and kind == "continue" else None)
        if session is None and kind != "fresh":
            prompt, kind = self.instruction, "instruction"
        first = await self.store.logs.max_log_seq(self.run_id)
        await self.store.agent.start_agent_round(self.run_id, number, prompt_kind=kind,
                                                 first_log_seq=first)
        self._live[number] = _Live(number, self.adapter.stream_parser(), asyncio.Event())
        await self._exec(number, prompt, session, budget_sec)
        self.bus.publish(AgentRoundStarted(self.run_id, number, kind))
        self.say(f"round {number} started ({kind}"
                 + (f", session {session}" if session else "") + ")")

    async def _exec(self, number: int, prompt: str, session: str | None,
                    budget_sec: float) -> None:
        nn = f"{number:03d}"
        await put_files(self.engine, self.handle, ROUNDS_DIR,
                        {f"prompt-{nn}.txt": (prompt if number == 1 or session is None
                                              else "").encode()},
                        uid=_uid(self.user), gid=_gid(self.user))
        token = await self.access.round_token(self.run_id, number)
        env = self.adapter.env(replace(self.endpoint, token=token))
        argv = [f"{AGENT_DIR}/round.sh", str(number), f"{max(1, int(budget_sec))}",
                *self.adapter.round_argv(number, session, prompt)]
        await exec_detached(self.engine, self.handle, argv, user=self.user,
                            workdir="/workspace/repo", env=env)

    async def wait_round(self, number: int) -> RoundRecord:
        live = self._live.get(number)
        if live is None:
            live = await self._rebuild(number)
        began = asyncio.get_running_loop().time()
        restarted = False  # a round is started again at most once, and only if it never ran
        while not live.done.is_set():
            try:
                await asyncio.wait_for(live.done.wait(), timeout=POLL_SEC)
                break
            except TimeoutError:
                pass
            if not await is_running(self.engine, self.handle):
                return await self._finish(number, live, container_gone=True)
            waited = asyncio.get_running_loop().time() - began
            if (waited > START_GRACE_SEC and not restarted
                    and await self._file(f"started-{number:03d}") is None):
                # srb died between recording the round and starting it: start it again.
                self.say(f"round {number} never started; starting it again")
                session = await self._session_id()
                await self._exec(number, self.instruction if session is None else CONTINUE,
                                 session, 600)
                restarted = True
        return await self._finish(number, live)

    # -- the log sink's side ------------------------------------------------------------------

    async def on_lines(self, lines: list[tuple[str, str, str]]) -> None:
        """Stdout lines just stored, in order: markers switch rounds, the rest is parsed."""
        async with self._lock:
            pending: dict[int, list[AgentEvent]] = {}
            stamps: dict[int, list[str]] = {}
            for ts, stream, text in lines:
                if stream != "stdout":
                    continue
                mark = parse_marker(text)
                if mark is not None:
                    number, what, rc = mark
                    if what == "start":
                        self._current = number
                        self._live.setdefault(number, _Live(
                            number, self.adapter.stream_parser(), asyncio.Event()))
                    elif what == "exit" and number in self._live:
                        await self._flush(number, pending.pop(number, []),
                                          stamps.pop(number, []))
                        self._live[number].exit_code = rc
                        self._live[number].done.set()
                        self._current = None
                    continue
                live = self._live.get(self._current) if self._current else None
                if live is None:
                    continue
                evs = live.feed(text)
                pending.setdefault(live.number, []).extend(evs)
                stamps.setdefault(live.number, []).extend([ts] * len(evs))
            for number, evs in pending.items():
                await self._flush(number, evs, stamps.get(number, []))

    async def _flush(self, number: int, events: list[AgentEvent], stamps: list[str]) -> None:
        if not events:
            return
        rows = [(ts, ev.kind, ev.data) for ts, ev in zip(stamps, events, strict=True)]
        last = await self.store.agent.append_agent_events(self.run_id, number, rows)
        first = last - len(rows) + 1
        self.bus.publish(AgentTranscript(self.run_id, number, tuple(
            (first + i, ts, kind, data) for i, (ts, kind, data) in enumerate(rows))))

    async def _rebuild(self, number: int) -> _Live:
        """After a restart: re-parse the unfinished round's stored lines into its events."""
        rounds = {r.round: r for r in await self.store.agent.agent_rounds(self.run_id)}
        first = rounds[number].first_log_seq if number in rounds else 0
        live = _Live(number, self.adapter.stream_parser(), asyncio.Event())
        rows: list[tuple[str, str, dict[str, Any]]] = []
        started = False
        for _seq, ts, text in await self.store.agent.stdout_lines_after(self.run_id, first):
            mark = parse_marker(text)
            if mark is not None and mark[0] == number:
                if mark[1] == "start":
                    started = True
                elif mark[1] == "exit":
                    live.exit_code = mark[2]
                    live.done.set()
                continue
            if started and not live.done.is_set():
                rows += [(ts, ev.kind, ev.data) for ev in live.feed(text)]
        await self.store.agent.replace_agent_events(self.run_id, number, rows)
        async with self._lock:
            self._live[number] = live
            if started and not live.done.is_set():
                self._current = number
        return live

    async def _trajectory(self, number: int) -> RoundSummary:
        """mini-swe-agent's round: its events from the trajectory file, stored at the end."""
        assert isinstance(self.adapter, MiniSweAgentAdapter)
        path = self.adapter.trajectory(number)
        data = await fetch_file(self.engine, self.handle, path, max_bytes=RAW_MAX_BYTES)
        if data is None:
            return RoundSummary(error="mini-swe-agent wrote no trajectory file")
        self.raw_dir.mkdir(parents=True, exist_ok=True)
        (self.raw_dir / path.rsplit("/", 1)[1]).write_bytes(data)
        try:
            doc = json.loads(data)
        except ValueError as exc:
            return RoundSummary(error=f"mini-swe-agent's trajectory is not JSON: {exc}")
        events, summary = parse_trajectory(doc if isinstance(doc, dict) else {})
        ts = utc_now()
        await self.store.agent.replace_agent_events(self.run_id, number,
                                                    [(ts, e.kind, e.data) for e in events])
        self.bus.publish(AgentTranscript(self.run_id, number, tuple(
            (i + 1, ts, e.kind, e.data) for i, e in enumerate(events))))
        return summary

    # -- finishing --------------------------------------------------------------------------

    async def _file(self, name: str) -> bytes | None:
        return await fetch_file(self.engine, self.handle, f"{ROUNDS_DIR}/{name}",
                                max_bytes=RAW_MAX_BYTES)

    async def _finish(self, number: int, live: _Live, *, container_gone: bool = False
                      ) -> RoundRecord:
        nn = f"{number:03d}"
        s: RoundSummary = live.parser.summary
        before = after = None
        rc = live.exit_code
        if not container_gone:
            for name in (f"round-{nn}.jsonl", f"round-{nn}.stderr"):
                data = await self._file(name)
                if data is not None:
                    self.raw_dir.mkdir(parents=True, exist_ok=True)
                    (self.raw_dir / name).write_bytes(data)
            before = (await self._file(f"tree-before-{nn}") or b"").decode().strip() or None
            after = (await self._file(f"tree-after-{nn}") or b"").decode().strip() or None
            if rc is None:
                raw = (await self._file(f"rc-{nn}") or b"").decode().strip()
                rc = int(raw) if raw.lstrip("-").isdigit() else None
            if isinstance(self.adapter, MiniSweAgentAdapter):
                s = await self._trajectory(number)
        failed = container_gone or rc != 0 or s.is_error or s.terminal_reason is None
        error = s.error or (s.errors[-1] if failed and s.errors else None)
        if failed and not error:
            error = ("the agent container stopped during the round" if container_gone
                     else f"the client exited {rc} without a result")
        record = RoundRecord(
            number=number, final_message=s.final_message, exit_code=rc,
            tree_changed=before != after, acted=s.tool_calls > 0, failed=failed,
            produced_work=s.work_events > 0, error=error,
            submitted=s.terminal_reason == "Submitted")
        verdict = _verdict(record)
        await self.store.agent.finish_agent_round(
            self.run_id, number, ended_at=utc_now(), exit_code=rc, session_id=s.session_id,
            final_message=s.final_message[-4000:], tree_before=before, tree_after=after,
            acted=record.acted, failed=failed, error=(error or None) and error[:2000],
            input_tokens=s.input_tokens, output_tokens=s.output_tokens,
            cache_read_tokens=s.cache_read_tokens, cache_write_tokens=s.cache_write_tokens,
            reasoning_tokens=s.reasoning_tokens, client_cost_usd=s.client_cost_usd,
            verdict=verdict)
        tokens = {"input": s.input_tokens, "output": s.output_tokens,
                  "cache_read": s.cache_read_tokens, "cache_write": s.cache_write_tokens,
                  "reasoning": s.reasoning_tokens}
        ledger = None
        with contextlib.suppress(Exception):
            ledger = await self.access.totals(self.run_id)
        spent = ledger.get("cost_usd") if ledger else None
        if ledger and ledger.get("unpriced_requests") and not spent:
            spent = None  # nothing priced: "unpriced", not $0
        self.bus.publish(AgentRoundFinished(self.run_id, number, verdict, rc, tokens,
                                            s.client_cost_usd,
                                            float(spent) if spent is not None else None))
        self.say(f"round {number} ended: {verdict} (exit {rc})")
        return record


def _verdict(rec: RoundRecord) -> str:
    if rec.submitted and not rec.failed:
        return "submitted"
    if rec.failed:
        return "failed after work" if rec.produced_work else "failed"
    if rec.tree_changed:
        return "changed the tree"
    return "ran commands" if rec.acted else "idle"


def _record(r: Any) -> RoundRecord:
    return RoundRecord(
        number=r.round, final_message=r.final_message or "", exit_code=r.exit_code,
        tree_changed=r.tree_before != r.tree_after, acted=bool(r.acted),
        failed=bool(r.failed), produced_work=(r.verdict or "") not in ("failed",),
        error=r.error, submitted=r.verdict == "submitted", fresh=r.prompt_kind == "fresh")


def _uid(user: str) -> int:
    return int(user.split(":")[0])


def _gid(user: str) -> int:
    return int(user.split(":")[1])
