"""A Stage III adversary that is a real client (Claude Code, Codex) in a lane of its own.

Each such round gets a lane container made fresh from the verification image: both trees
at the paths the prompt names, read-only (root's files; the client is uid
:data:`LANE_UID`), a writable scratch folder and HOME, the pinned client mounted
read-only, and for network only the relay's namespace (the gateway at 127.0.0.1, no
route, no DNS). The gateway token is issued for (run, ``adversary``, round) and reaches
the client only in its exec's environment; the lane holds no key.

The client hands in work through two commands srb puts in the lane, ``try_test`` and
``report``: they talk to srb's desk (:mod:`.lane_files`) over a Unix socket, and srb
judges every candidate in the verification container as the round's slot identity
through the exec broker (:func:`.channels.adjudicate_in`), exactly as a model or fuzz
adversary's. ``try_test`` gives back pass or fail per side and nothing else; ``report``
keeps the final candidate and its claim, adjudicated after the session like any
reported candidate. The code under test never runs in the lane through srb, and the
lane holds neither grader files nor the other trees' outputs.

What the client runs itself while it explores (its shell tool: Claude Code through
``CLAUDE_CODE_SHELL_PREFIX``, Codex through the shell it is given) goes through the lane's
shell (:mod:`.lane_files` ``shell.py``) to the desk, which runs it as
:data:`RUNNER_UID` with a HOME of its own and no token: so the submission's program, which
only runs inside such a command, is held apart from the client as a candidate is held
apart from the grader — it cannot read the client's files, transcript, memory or token,
and the desk takes ``try_test``/``report`` only from the client's own uid (a plain call of
either runs as the client; anything else, including a script that calls them, does not).

Outcomes: a report upheld -> broken, else survived; no report by the end of the session
(its ``budget_sec`` is the session's wall clock) -> survived; a client that crashes or
that the gateway refuses -> error, never a survival.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from srb_tui.agents.adapters import Endpoint, make_adapter
from srb_tui.agents.clients import ensure_installed, resolve_pin
from srb_tui.agents.errors import ClientError
from srb_tui.agents.kinds import CLIENTS
from srb_tui.agents.kinds import LANE_CLIENTS as CLIENT_DRIVERS
from srb_tui.agents.streams import AgentEvent
from srb_tui.config import DEFAULT_BASE_IMAGE
from srb_tui.drivers import ChannelError
from srb_tui.gateway import Gateway
from srb_tui.runner import Bind, ContainerHandle, ContainerSpec, DockerEngine, RunnerError
from srb_tui.runner.containers import create, exec_run, put_tree, remove, start
from srb_tui.runner.exec_session import ExecSession, exec_streamed, open_exec_session
from srb_tui.runner.files import put_files
from srb_tui.runner.reaper import list_managed
from srb_tui.runner.relay import (
    RELAY_PORT,
    RELAY_ROLE,
    agent_network_mode,
    ensure_relay_image,
    start_relay,
)
from srb_tui.schema import Adversary, Task
from srb_tui.service.views.agent_report import tool_input_text
from srb_tui.store import LedgerRow

from .channels import adjudicate_in
from .probe_prompt import ADVERSARY_SYSTEM, opening, read_probe_prompt
from .stage_container import StageContainer
from .stage_layout import CANDIDATES, ORIGINAL_DIR, SUBMISSION_DIR
from .verification_setup import ProbeSetup, allowed_commands

LANE_UID = 2900
RUNNER_UID = 2901
"""The uid the client's shell commands (and so the code under test) run as: not the
client's, so they cannot read its HOME, transcript, memory or token (issue 25 item 3)."""
LANE_DIR = "/srb/lane"
LANE_SCRATCH = f"{LANE_DIR}/scratch"
LANE_HOME = f"{LANE_DIR}/home"
RUNNER_HOME = f"{LANE_DIR}/run"
DESK_DIR = "/srb/desk"
DESK_SOCKET = f"{DESK_DIR}/desk.sock"
SHELL_PREFIX = f"{DESK_DIR}/bin/srb-run"
SHIM_DIR = f"{DESK_DIR}/shim"
LANE_ROLE_PREFIX = "lane-"
FILES = Path(__file__).resolve().parent / "lane_files"
DESK_LINE_SEC = 5.0

LANE_RULES = (
    "\n\nHow to work in this session: both trees are read-only ({original} is State A, "
    "{submission} the migrated submission); write your files in {scratch}. Run "
    "`try_test FILE` to try a candidate on both trees: srb runs it and tells you only "
    "whether it passes or fails on each side. When you have a candidate that passes on "
    "State A and fails on the submission, hand it in with "
    "`report --claim \"WHAT DIFFERS\" FILE`; that ends your hunt. If you find no "
    "difference, say so and stop without a report."
)


@dataclasses.dataclass(frozen=True)
class LaneEnd:
    """What one client session left: its transcript, tries, report and exit."""

    events: list[dict[str, Any]]
    tries: list[dict[str, Any]]
    report: dict[str, Any] | None
    exit_code: int | None
    timed_out: bool
    error: str | None
    usage: dict[str, float]
    refused: list[str]


TAIL = 30
"""Transcript lines a lane's stored record keeps for the console."""


def transcript_line(event: Mapping[str, Any]) -> str:
    """One line of a lane's transcript for the console ('' for events it skips)."""
    kind = event.get("kind")
    if kind == "message":
        return f"says: {str(event.get('text') or '')[:160]}"
    if kind == "tool_call":
        return f"{event.get('name')}: {tool_input_text(event.get('input'))[:160]}"
    if kind == "try":
        got = event.get("sides") or {}
        return (f"try_test #{event.get('n')}: original {got.get('original', '?')}, "
                f"submission {got.get('submission', '?')}")
    if kind == "report":
        return f"report: {str(event.get('claim') or '')[:160]}"
    if kind == "error":
        return f"error: {str(event.get('text') or '')[:160]}"
    return ""


def lane_cost(rows: Sequence[LedgerRow], round_no: int) -> dict[str, Any]:
    """The lane's gateway requests (its token's round): count, tokens, cost, latency."""
    mine = [r for r in rows if r.role == "adversary" and r.round == round_no]
    if not mine:
        return {"requests": 0}
    priced = [r.cost_usd for r in mine if r.cost_usd is not None]
    return {
        "requests": len(mine),
        "refused_requests": sum(1 for r in mine if r.status >= 400),
        "last_status": mine[-1].status,
        "cost_usd": round(sum(priced), 6) if priced else None,
        "unpriced_requests": len(mine) - len(priced),
        "gateway_input_tokens": sum(r.input_tokens for r in mine),
        "gateway_output_tokens": sum(r.output_tokens for r in mine),
        "mean_latency_ms": round(sum(r.latency_ms for r in mine) / len(mine), 1),
    }


def is_client_driver(driver: str) -> bool:
    return driver in CLIENT_DRIVERS


def lane_limit(cpus: float, memory_mb: int, clients: int) -> int:
    """How many client lanes run at once: one per CPU and per GiB of the verifier's
    memory (a client session with its tools takes about that), at least one."""
    return max(1, min(clients, int(cpus), memory_mb // 1024))


def sides(verdict: dict[str, Any]) -> dict[str, str]:
    """pass / fail per side from a verdict's first attempt (all a try may learn)."""
    out: dict[str, str] = {}
    for run in verdict.get("runs") or []:
        role = run.get("role")
        if role in ("original", "submission") and role not in out:
            ok = (not run.get("timed_out") and run.get("start_error") is None
                  and run.get("exit_code") == 0)
            out[str(role)] = "pass" if ok else "fail"
    return out


async def _relay(engine: DockerEngine, gateway: Gateway, run_id: str,
                 labels: dict[str, str]) -> tuple[ContainerHandle, bool]:
    """The run's relay (the agent phase's when it still runs, else a new one: owned)."""
    for c in await list_managed(engine, run_id, store_tag=labels.get("srb.store")):
        if c.handle.role == RELAY_ROLE:
            return c.handle, False
    await ensure_relay_image(engine, DEFAULT_BASE_IMAGE)
    handle = await start_relay(engine, run_id, gateway.socket_path.parent, labels=labels)
    return handle, True


class ClientLanes:
    """The relay the stage's client lanes share; removed at the end when srb started it."""

    def __init__(self, engine: DockerEngine, gateway: Gateway | None, run_id: str,
                 labels: dict[str, str]) -> None:
        self.engine, self.gateway, self.run_id, self.labels = engine, gateway, run_id, labels
        self._relay: ContainerHandle | None = None
        self._owned = False
        self._lock = asyncio.Lock()

    async def network_mode(self) -> str:
        if self.gateway is None:
            raise ClientError("a client adversary needs srb's model gateway (see `srb doctor`)")
        async with self._lock:
            if self._relay is None:
                self._relay, self._owned = await _relay(
                    self.engine, self.gateway, self.run_id, self.labels)
        return agent_network_mode(self._relay)

    async def aclose(self) -> None:
        if self._relay is not None and self._owned:
            with contextlib.suppress(RunnerError):
                await remove(self.engine, self._relay)
        self._relay = None


def _lane_spec(box: StageContainer, adversary: Adversary, network: str,
               client_mount: tuple[str, str]) -> ContainerSpec:
    uid = f"uid={LANE_UID},gid={LANE_UID}"
    return ContainerSpec(
        image=box.image,
        run_id=box.run_id,
        role=f"{LANE_ROLE_PREFIX}{adversary.id}"[:60],
        command=("sleep", "infinity"),
        user="0:0",
        allow_root=True,
        # Root's only (set-up; the desk starting the runner's commands as RUNNER_UID): the
        # client's and the runner's uids hold none, and no-new-privileges stays on.
        cap_add=("CHOWN", "FOWNER", "SETUID", "SETGID"),
        env={"HOME": LANE_HOME},
        workdir="/",
        labels=dict(box.spec.labels),
        mem_limit=box.spec.mem_limit,
        pids_limit=1024,
        nano_cpus=box.spec.nano_cpus,
        network_mode=network,
        binds=(Bind(client_mount[0], client_mount[1], read_only=True),),
        # HOME and the client's config are written before start, into the image's layer
        # (an archive put into a tmpfs mount would land under it): only scratch is tmpfs.
        tmpfs={
            # Shared by the client (its file tools) and the runner (its commands).
            LANE_SCRATCH: f"size=512m,mode=0777,{uid},exec",
            RUNNER_HOME: f"size=64m,mode=0700,uid={RUNNER_UID},gid={RUNNER_UID}",
            "/tmp": "size=256m,mode=1777,exec",
        },
    )


async def _put_lane(engine: DockerEngine, h: ContainerHandle, original: Path,
                    submission: Path) -> None:
    await put_tree(engine, h, original, dest=ORIGINAL_DIR, uid=0, gid=0)
    await put_tree(engine, h, submission, dest=SUBMISSION_DIR, uid=0, gid=0)
    command = b"#!/usr/bin/env python3\n" + (FILES / "command.py").read_bytes()
    shell = b"#!/usr/bin/env python3\n" + (FILES / "shell.py").read_bytes()
    await put_files(engine, h, DESK_DIR, {"desk.py": (FILES / "desk.py").read_bytes()},
                    uid=0, gid=0, mode=0o700)
    # Also in /usr/local/bin: a login shell (Codex runs `bash -lc`) resets PATH.
    for folder in (f"{DESK_DIR}/bin", "/usr/local/bin"):
        await put_files(engine, h, folder, {"try_test": command, "report": command},
                        uid=0, gid=0, mode=0o755)
    await put_files(engine, h, f"{DESK_DIR}/bin", {"srb-run": shell}, uid=0, gid=0, mode=0o755)
    await put_files(engine, h, SHIM_DIR, {"bash": shell}, uid=0, gid=0, mode=0o755)
    users = (f"srb-client:x:{LANE_UID}:{LANE_UID}:srb lane client:{LANE_HOME}:"
             f"{SHIM_DIR}/bash\nsrb-runner:x:{RUNNER_UID}:{RUNNER_UID}:srb lane runner:"
             f"{RUNNER_HOME}:/bin/bash\n")
    # Trees read-only for everyone, the desk's folder enterable (its socket is 0666).
    got = await exec_run(engine, h, ["sh", "-c",
                                     f"chmod -R a-w {ORIGINAL_DIR} {SUBMISSION_DIR} && "
                                     f"chmod 0755 {DESK_DIR} {DESK_DIR}/bin {SHIM_DIR} && "
                                     f"printf '{users}' >> /etc/passwd"],
                         user="0:0", timeout_sec=120)
    if got.exit_code != 0:
        raise ClientError(f"cannot make the lane's trees read-only: {got.describe()}")


class _Desk:
    """srb's side of the lane's desk: every try judged in the verification container."""

    def __init__(self, box: StageContainer, setup: ProbeSetup, adversary: Adversary,
                 slot: int, session: ExecSession, on_event: Any) -> None:
        self.box, self.setup, self.adversary, self.slot = box, setup, adversary, slot
        self.session, self.on_event = session, on_event
        self.tries: list[dict[str, Any]] = []
        self.report: dict[str, Any] | None = None
        self.refused: list[str] = []

    async def _answer(self, request: dict[str, Any]) -> str:
        tool, files = request.get("tool"), request.get("files")
        if not isinstance(files, dict) or not files:
            return "refused: no candidate files"
        files = {str(k): str(v) for k, v in files.items()}
        if tool == "report":
            self.report = {"files": files, "claim": str(request.get("claim") or "")}
            self.on_event({"kind": "report", "files": sorted(files),
                           "claim": self.report["claim"]})
            return "reported: srb adjudicates the candidate after your session; stop now"
        if tool != "try_test":
            return "refused: unknown command"
        number = len(self.tries) + 1
        folder = f"{CANDIDATES}/tries/{self.adversary.id}/{number:03d}"
        clock = time.monotonic()
        try:
            verdict = await adjudicate_in(self.box, self.setup.candidates, files, folder,
                                          slot=self.slot)
        except ChannelError as err:
            self.tries.append({"n": number, "error": str(err)})
            return f"refused: srb could not run the candidate ({err})"
        got = sides(verdict)
        findings = verdict.get("findings") or []
        entry = {"n": number, "files": sorted(files), "sides": got,
                 "outcome": verdict.get("outcome"), "reason": verdict.get("reason"),
                 "sec": round(time.monotonic() - clock, 3)}
        self.tries.append(entry)
        if findings:
            self.refused.append(f"try {number}: {verdict.get('reason')}")
        self.on_event({"kind": "try", **entry})
        return "\n".join(f"{side}: {got.get(side, 'fail')}"
                         for side in ("original", "submission"))

    async def serve(self) -> None:
        while True:
            try:
                raw = await self.session.readline(DESK_LINE_SEC)
            except TimeoutError:
                continue
            if raw is None:
                return
            try:
                request = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(request, dict) or request.get("ready"):
                continue
            text = await self._answer(request)
            await self.session.send((json.dumps({"text": text}) + "\n").encode())


def _event_dict(event: AgentEvent) -> dict[str, Any]:
    return {"kind": event.kind, **{k: v for k, v in event.data.items() if k != "kind"}}


async def run_client_session(
    box: StageContainer,
    setup: ProbeSetup,
    adversary: Adversary,
    task: Task,
    budget: float,
    *,
    original: Path,
    submission: Path,
    lanes: ClientLanes,
    gateway: Gateway,
    run_id: str,
    slot: int,
    on_event: Any,
) -> LaneEnd:
    """One client session in a fresh lane; what it left."""
    pin = resolve_pin(adversary.driver, None)
    installed = await asyncio.to_thread(ensure_installed, pin)
    effort = adversary.driver_options.get("effort") or adversary.metadata.get("effort")
    adapter = make_adapter(pin, adversary.model, str(effort) if effort else None)
    template = read_probe_prompt(task, setup.folder, setup.probe.prompt)
    commands = allowed_commands(setup.probe.metadata)
    prompt = opening(template, task=task, probe=setup.probe, adversary=adversary,
                     budget_sec=budget, commands=commands)
    prompt = ADVERSARY_SYSTEM + "\n\n" + prompt + LANE_RULES.format(
        original=ORIGINAL_DIR, submission=SUBMISSION_DIR, scratch=LANE_SCRATCH)
    network = await lanes.network_mode()
    spec = _lane_spec(box, adversary, network, (str(installed.path), pin.mount))
    handle = await create(box.engine, spec)
    events: list[dict[str, Any]] = []

    def note(event: dict[str, Any]) -> None:
        events.append(event)
        on_event(event)

    try:
        await start(box.engine, handle)
        await _put_lane(box.engine, handle, original, submission)
        base = f"http://127.0.0.1:{RELAY_PORT}"
        files = {".srb": b"", "home/.srb": b"", "claude/.srb": b"", "codex/.srb": b"",
                 **adapter.files(Endpoint(base, f"{base}/v1", "")),
                 "prompt.txt": prompt.encode()}
        await put_files(box.engine, handle, f"{LANE_HOME}/agent", files,
                        uid=LANE_UID, gid=LANE_UID)
        owned = await exec_run(box.engine, handle, [
            "sh", "-c", f"chown -R {LANE_UID}:{LANE_UID} {LANE_HOME} && chmod 0700 {LANE_HOME}"],
            user="0:0", timeout_sec=60)
        if owned.exit_code != 0:
            raise ClientError(f"cannot give the lane's HOME to its client: {owned.describe()}")
        session = await open_exec_session(
            box.engine, handle, ["python3", f"{DESK_DIR}/desk.py", DESK_SOCKET, str(LANE_UID),
                                 str(RUNNER_UID), RUNNER_HOME, LANE_SCRATCH, "/tmp",
                                 ORIGINAL_DIR, SUBMISSION_DIR], user="0:0")
        desk = _Desk(box, setup, adversary, slot, session, note)
        serving = asyncio.create_task(desk.serve())
        token = await gateway.issue_token(run_id, "adversary", round=slot + 1)
        env = _lane_env(adapter.env(Endpoint(base, f"{base}/v1", token)), adversary.driver)
        argv = adapter.round_argv(1, None, "")
        parser = adapter.stream_parser()

        def heard(raw: bytes) -> None:  # the client's stream, parsed as it arrives
            for event in parser.feed(raw.decode("utf-8", "replace")):
                note(_event_dict(event))

        clock = time.monotonic()
        try:
            res = await exec_streamed(
                box.engine, handle,
                ["sh", "-c", f'cd {LANE_SCRATCH} && exec "$@" < {LANE_HOME}/agent/prompt.txt',
                 "client", *argv],
                user=f"{LANE_UID}:{LANE_UID}", env=env, timeout_sec=budget, on_line=heard)
        finally:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await serving
            with contextlib.suppress(RunnerError):
                await session.close()
        summary = getattr(parser, "summary", None)
        error = None
        if summary is not None and summary.is_error:
            error = f"the client's session failed: {summary.error or summary.terminal_reason}"
        elif not res.timed_out and res.exit_code != 0:
            tail = res.stderr.decode("utf-8", "replace").strip()[-300:]
            error = f"the client exited {res.exit_code}: {tail}"
        usage = {"input_tokens": getattr(summary, "input_tokens", 0),
                 "output_tokens": getattr(summary, "output_tokens", 0),
                 "session_sec": round(time.monotonic() - clock, 3)}
        return LaneEnd(events, desk.tries, desk.report, res.exit_code,
                       res.timed_out, error, usage, desk.refused)
    finally:
        with contextlib.suppress(RunnerError):
            await remove(box.engine, handle)


def _lane_env(env: dict[str, str], driver: str) -> dict[str, str]:
    """The client's environment: its HOME in the lane, srb's commands on PATH, and its
    shell commands routed through the lane's shell as its ``lane_shell`` says (agents/kinds)."""
    path = env.get("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    home = f"{LANE_HOME}/agent"
    out = {**env, "PATH": f"{DESK_DIR}/bin:{path}", "HOME": f"{home}/home"}
    if CLIENTS[driver].lane_shell == "shim":
        out.update(PATH=f"{SHIM_DIR}:{out['PATH']}", SHELL=f"{SHIM_DIR}/bash")
    else:
        out.update(CLAUDE_CODE_SHELL_PREFIX=SHELL_PREFIX, SHELL="/bin/bash")
    for key in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        if key in out:
            out[key] = f"{home}/{out[key].rsplit('/', 1)[-1]}"
    return out

