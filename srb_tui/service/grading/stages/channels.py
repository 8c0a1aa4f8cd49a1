"""Tool channels that execute inside a stage container.

`ContainerToolChannel` keeps one ``exec`` of the grader's ``tools`` loop open with its stdin
attached (:class:`srb_tui.runner.files.ExecSession`) and speaks the JSON-lines protocol over
it, so a review costs one process however many tools it calls. `AdversaryChannel` adds
``try_test``: the candidate's files are written into the container and judged by the
grader's ``candidate`` subcommand, exactly as a reported candidate is.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from srb_tui.drivers import ChannelError
from srb_tui.runner import RunnerError
from srb_tui.runner.exec_session import ExecSession, open_exec_session
from srb_tui.runner.files import put_files

from .common import StageFault
from .stage_container import StageContainer
from .stage_layout import (
    CANDIDATES,
    GRADER_HOME,
    ORIGINAL_DIR,
    SCRATCH,
    STAGE_BASE,
    SUBMISSION_DIR,
    boundary_wanted,
)

TOOL_TIMEOUT_SEC = 300.0
TOKEN_SALT_FILE = f"{SCRATCH}/target-token.salt"


class ContainerToolChannel:
    """The grader's tools loop in a stage container, one request line per call."""

    def __init__(
        self,
        container: StageContainer,
        *,
        allowed_commands: Sequence[str] = (),
        run_timeout_sec: float = 60.0,
        timeout_sec: float = TOOL_TIMEOUT_SEC,
    ) -> None:
        self.container = container
        self.allowed = list(allowed_commands)
        self.run_timeout_sec = run_timeout_sec
        self.timeout_sec = timeout_sec
        self._session: ExecSession | None = None
        self._next_id = 0
        self.calls = 0

    async def _open(self) -> ExecSession:
        if self._session is None:
            argv = self.container.grader_argv([
                "tools",
                "--original",
                ORIGINAL_DIR,
                "--submission",
                SUBMISSION_DIR,
                "--run-timeout",
                f"{self.run_timeout_sec:g}",
            ])
            if self.allowed:
                argv += ["--allow", *self.allowed]
            try:
                self._session = await open_exec_session(
                    self.container.engine, self.container.h, argv, workdir=GRADER_HOME
                )
            except RunnerError as err:
                raise ChannelError(f"cannot start the tools loop: {err}") from None
        return self._session

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        session = await self._open()
        self._next_id += 1
        self.calls += 1
        request_id = self._next_id
        line = json.dumps({"id": request_id, "tool": tool, "args": dict(args)}) + "\n"
        try:
            await session.send(line.encode("utf-8"))
            while True:
                raw = await session.readline(self.timeout_sec)
                if raw is None:
                    tail = session.stderr_tail.strip()[-500:]
                    raise ChannelError(
                        "the tools loop in the stage container exited"
                        + (f": {tail}" if tail else "")
                    )
                reply = json.loads(raw)
                if not isinstance(reply, dict):
                    raise ChannelError("the tools loop wrote a reply that is not an object")
                reply_id = reply.pop("id", None)
                if isinstance(reply_id, int) and reply_id < request_id:
                    continue
                if reply_id != request_id or not isinstance(reply.get("ok"), bool):
                    raise ChannelError(f"the tools loop answered out of turn: {reply_id!r}")
                return reply
        except TimeoutError:
            raise ChannelError(f"no reply to {tool} within {self.timeout_sec:g} s") from None
        except ValueError as err:
            raise ChannelError(f"the tools loop wrote a line that is not JSON: {err}") from None
        except RunnerError as err:
            raise ChannelError(str(err)) from None

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(RunnerError):
                await session.close()


@dataclass(frozen=True)
class CandidateOptions:
    """How the grader's ``candidate`` subcommand is called (from probe.toml)."""

    command: tuple[str, ...]
    reruns: int
    timeout_sec: float
    fault_codes: str
    deny_commands: tuple[str, ...]
    original_digest: str | None = None
    network_allowed: bool = False
    lanes: int = 1
    """rounds whose candidate runs take turns on the container's run lease"""
    token_salt_file: str = TOKEN_SALT_FILE
    """where the grader keeps the SRB_TARGET_TOKEN salt these adjudications use"""
    boundary: bool = field(default_factory=boundary_wanted)
    """candidates and the programs they start run as two identities (the exec broker);
    ``SRB_STAGE3_BOUNDARY=off`` in srb's environment turns it off to show what it prevents"""
    nondeterminism: str = "reject"
    """probe.toml ``[metadata] nondeterminism``: "break" counts a submission that gives
    different results for the same candidate (State A steady) as a break; "reject" (the
    published grader's reading) records it without counting it"""
    behaviour_only: bool = False
    """probe.toml ``[metadata] behaviour_only``: the candidate cannot read the tree and one
    that runs no program of it is invalid (grader/candidates/); srb's own tasks"""

    def args(self) -> list[str]:
        out = [
            "--command-json",
            json.dumps(list(self.command)),
            "--reruns",
            str(self.reruns),
            "--timeout",
            f"{self.timeout_sec:g}",
            "--fault-codes",
            self.fault_codes,
        ]
        for command in self.deny_commands:
            out += ["--deny-command", command]
        if self.original_digest:
            out += ["--original-digest", self.original_digest]
        # One salt for the whole stage, in a file only the grader reads: every candidate
        # sees the same SRB_TARGET_TOKEN for the same tree, none can derive the other's.
        out += ["--token-salt-file", self.token_salt_file]
        if self.network_allowed:
            out.append("--network-allowed")
        if not self.boundary:
            out.append("--no-boundary")
        out += ["--nondeterminism", self.nondeterminism]
        if self.behaviour_only:
            out.append("--behaviour-only")
        return out

    def exec_budget_sec(self) -> float:
        """Host-side ceiling for one adjudication: every run at its timeout, plus slack, for
        each lane whose runs may hold the run lease before this one's."""
        return max(1, self.lanes) * 2 * max(1, self.reruns) * (self.timeout_sec + 10) + 60


async def adjudicate_in(
    container: StageContainer,
    options: CandidateOptions,
    files: Mapping[str, str],
    folder: str,
    *,
    slot: int = 0,
) -> dict[str, Any]:
    """Write ``files`` to ``folder`` in the container and run ``candidate`` on them as the
    slot's identity; the verdict document. It counts only from a grader that exited 0.
    Raises ChannelError when the harness itself fails."""
    try:
        await put_files(
            container.engine,
            container.h,
            folder,
            {name: text.encode("utf-8") for name, text in files.items()},
            uid=0,
            gid=0,
            mode=0o700,  # the grader's alone: the grader's command line names this folder
        )
        res = await container.grader(
            [
                "candidate",
                "--candidate",
                folder,
                "--original",
                ORIGINAL_DIR,
                "--submission",
                SUBMISSION_DIR,
                "--stage-base",
                f"{STAGE_BASE}/{slot}/adjudication",
                "--slot",
                str(slot),
                "--name",
                folder.rstrip("/").rsplit("/", 1)[-1],
                *options.args(),
            ],
            timeout_sec=options.exec_budget_sec(),
        )
    except (RunnerError, StageFault, ValueError) as err:
        raise ChannelError(f"cannot run the candidate: {err}") from None
    if res.timed_out:
        raise ChannelError("candidate adjudication ran past its time budget")
    if res.exit_code != 0:
        tail = res.stderr.decode("utf-8", "replace").strip()[-300:]
        raise ChannelError(f"the candidate's grader did not finish ({res.describe()}): {tail}")
    text = res.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        verdict = json.loads(text[-1]) if text else None
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict) or "outcome" not in verdict:
        tail = res.stderr.decode("utf-8", "replace").strip()[-500:]
        raise ChannelError(f"candidate adjudication gave no verdict (exit {res.exit_code}): {tail}")
    return verdict


class AdversaryChannel(ContainerToolChannel):
    """Reading tools plus ``try_test`` for one Stage III round."""

    def __init__(
        self,
        container: StageContainer,
        options: CandidateOptions,
        adversary_id: str,
        *,
        allowed_commands: Sequence[str] = (),
        slot: int = 0,
    ) -> None:
        super().__init__(container, allowed_commands=allowed_commands)
        self.options = options
        self.adversary_id = adversary_id
        self.slot = slot
        self.tries = 0

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        if tool != "try_test":
            return await super().call(tool, args)
        files = args.get("files")
        if not isinstance(files, dict):
            return {"ok": False, "error": "'files' must be an object of path -> text"}
        self.tries += 1
        folder = f"{CANDIDATES}/tries/{self.adversary_id}/{self.tries:03d}"
        verdict = await adjudicate_in(
            self.container,
            self.options,
            {str(k): str(v) for k, v in files.items()},
            folder,
            slot=self.slot,
        )
        return {"ok": True, "result": verdict}
