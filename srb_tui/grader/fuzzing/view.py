"""What both fuzz domains share: the two trees parked at one view path, and the round's record.

:mod:`.argv` (bytes on stdin of a command) and :mod:`.http` (requests to a service) run
both trees the same way: each tree is copied once into the grader's private folder (State A's
copy checked against the task's digest and its stat signature taken), and whichever tree is
running is renamed onto one shared view path, so the program under test cannot tell the roles
apart any more than a candidate can. The CLI domain then copies the view, as the slot, to the
slot's ``/srb/run/N/target`` and runs it there with that cwd, the path adjudication runs a
tree at (:meth:`TreeView.place`), so the program cannot tell the fuzzer from a candidate run
by its own path either. The slot's scratch folders are emptied before each run,
the candidate environment carries a role-neutral token, a difference becomes an ordinary
``candidate.sh`` judged by :func:`..candidates.judge.adjudicate`, and the result document has one
shape for both domains.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..boundary import sandbox
from ..boundary.lockdown import stat_signature
from ..candidates.judge import adjudicate
from ..candidates.records import CandidateSpec, counts_as_break
from ..candidates.run import candidate_env
from ..candidates.staging import StagingError, check_original, stage_copy
from ..envelope import atomic_write_json, utc_iso
from .build import BuildFault, BuildSpec, build_tree

ROLES = ("original", "submission")
MAX_CORPUS = 256

Item = TypeVar("Item")


class HarnessFault(Exception):
    """The fuzzer itself cannot go on (not a finding about the submission)."""


class RoundConfig(Protocol):
    """What the shared parts read of either domain's config (FuzzConfig, HttpConfig)."""

    adversary: str
    original: Path
    submission: Path
    seed: int
    budget_sec: float
    spec: CandidateSpec
    work: Path
    stage_base: Path | None
    build: BuildSpec | None


@dataclass
class RoundState:
    """The counters and findings of one fuzz round (``restarts``: HTTP servers only)."""

    iterations: int = 0
    executions: int = 0
    differences: int = 0
    restarts: int = 0
    candidates: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class TreeView:
    """Both trees parked in the grader's private folder, one at a time at the view path.

    Both parked copies belong to the grader; the view (where the slot's uid runs them,
    read-only) is reachable by that slot alone. State A's copy is hashed when it is parked
    and its stat signature re-checked before every mount. With a ``fuzz_build``
    (:mod:`.build`) each parked copy is replaced by its built tree before the first
    run: State A's build failing is a harness fault; the submission's is kept in
    ``build_failed`` (its runs are a program that does not start)."""

    def __init__(self, config: RoundConfig) -> None:
        spec, stage_base = config.spec, config.stage_base
        self.spec = spec
        self.slot = spec.slot
        base = config.work / "runner"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        shown = stage_base or base
        shown.mkdir(parents=True, exist_ok=True)
        if sandbox.enabled():
            sandbox.join_slot_groups([self.slot])
            sandbox.give_to_slot(shown, self.slot)
        self.view = shown / "view"
        shutil.rmtree(self.view, ignore_errors=True)
        self.parked = {"original": base / "parked-original", "submission": base / "parked-sub"}
        self.candidate = shown / "candidate"
        shutil.rmtree(self.candidate, ignore_errors=True)
        self.candidate.mkdir()
        self.home = base / "work"
        try:
            for role, tree in zip(ROLES, (config.original, config.submission), strict=True):
                stage_copy(tree, self.parked[role])
            check_original(spec, self.parked["original"], "the fuzzer's copy of State A")
        except StagingError as exc:
            raise HarnessFault(str(exc)) from None
        self.current: str | None = None
        self.built = config.build is not None
        self.build_failed: dict[str, str] = {}
        self.build_notes: list[str] = []
        if config.build is not None:
            self._build_both(config.build, config.work.parent / "builds", shown / "build")
        self.signature = stat_signature(self.parked["original"])

    def _build_both(self, build: BuildSpec, cache: Path, rooms: Path) -> None:
        """Replace each parked tree by its build (the slot reads it at the view path)."""
        for role in ROLES:
            os.rename(self.parked[role], self.view)  # where the slot may read it
            try:
                result = build_tree(build, self.view, self.slot, build.cache or cache, rooms)
            except BuildFault as exc:
                raise HarnessFault(f"fuzz_build could not run on the {role} tree: {exc}") from None
            finally:
                os.rename(self.view, self.parked[role])
            how = "cached" if result.cached else "built"
            if result.tree is None:
                why = f"{result.error}: {result.log_tail[-800:]}"
                if role == "original":
                    raise HarnessFault(f"fuzz_build fails on State A (a harness fault): {why}")
                self.build_failed[role] = why
                self.build_notes.append(f"fuzz_build failed on the submission ({how}): "
                                        f"{result.error}")
                continue
            try:
                stage_copy(result.tree, self.parked[role])
            except StagingError as exc:
                raise HarnessFault(str(exc)) from None
            self.build_notes.append(f"fuzz_build {role}: {how}")

    def mount(self, role: str) -> None:
        """Put ``role``'s tree at the view path (parking the other one first)."""
        if self.current == role:
            return
        if self.current is not None:
            os.rename(self.view, self.parked[self.current])
        if role == "original" and stat_signature(self.parked["original"]) != self.signature:
            raise HarnessFault("the fuzzer's copy of State A changed between two runs")
        os.rename(self.parked[role], self.view)
        self.current = role

    def park(self) -> None:
        """Take whichever tree is mounted out of the view (before a candidate is judged, so
        the submission's runs there never find State A at the view path)."""
        if self.current is not None:
            os.rename(self.view, self.parked[self.current])
            self.current = None

    def workdir(self) -> Path:
        """A fresh scratch folder (home, tmp, work below it) for the next run."""
        if sandbox.enabled():
            try:
                sandbox.reset(self.slot, remake=("home", "tmp", "work"))
            except sandbox.SandboxError as exc:  # never a silent chmod: the path is named
                raise HarnessFault(str(exc)) from None
            return sandbox.scratch_dir(self.slot)
        shutil.rmtree(self.home, ignore_errors=True)
        for sub in ("home", "tmp", "work"):
            (self.home / sub).mkdir(parents=True)
        return self.home

    def place(self, home: Path) -> Path:
        """Where the mounted tree runs, the path adjudication runs a tree at (issue 32: the
        program must not tell the fuzzer from a candidate run by its own path): with the
        sandbox, a fresh copy of the view the slot owns at ``<scratch>/target``, group-
        writable as adjudication's working copy, and the view parked again before the program
        starts (so no tree is at the view path while it runs); without it, the view. A tree
        built by ``fuzz_build`` keeps running at the view: a build may hold its own absolute
        path (an rpath, a generated script)."""
        if not sandbox.enabled() or self.built:
            return self.view
        target = home / "target"
        if sandbox.copy_as_slot(self.slot, self.view, target, group_write=True) != 0:
            raise HarnessFault(f"cannot copy the tree to {target} as slot {self.slot}")
        self.park()
        return target

    def env(self, home: Path) -> dict[str, str]:
        """The program's environment: the candidate environment without any ``SRB_*`` name,
        as the exec broker hands it to a program a candidate starts (issue 32: a program
        must not tell the fuzzer from adjudication by ``SRB_TARGET_TOKEN=fuzz``); both trees
        run at the same view path with the same environment."""
        env = candidate_env(
            self.spec, self.view, self.candidate / "candidate.sh", home / "work",
            token="fuzz", name="fuzz", home=home / "home", tmpdir=home / "tmp",
        )  # fmt: skip
        return {key: value for key, value in env.items() if not key.startswith("SRB_")}


def judge_candidate(
    config: RoundConfig,
    state: RoundState,
    script: str,
    found: dict[str, Any],
    observed: tuple[Any, Any],
) -> dict[str, Any]:
    """Write the next candidate's ``candidate.sh`` and adjudicate it; its record (the caller
    appends it to ``state.candidates`` once the round may go on):
    ``found`` says what the fuzzer found (input, argv or request), ``observed`` holds what
    State A and the submission did (objects with ``to_dict``)."""
    index = len(state.candidates)
    folder = config.work / "candidates" / f"{index:02d}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "candidate.sh").write_text(script, encoding="utf-8")
    verdict = adjudicate(
        folder, config.original, config.submission, config.spec,
        stage_base=(config.stage_base or config.work) / "adjudication",
        seen_failing=True,  # the fuzzer saw this input differ: a flaky port is no escape
    ).to_dict()  # fmt: skip
    record = {
        "index": index,
        **found,
        "files": {"candidate.sh": script},
        "observed": {"original": observed[0].to_dict(), "submission": observed[1].to_dict()},
        "verdict": verdict,
    }
    return record


def round_end(record: dict[str, Any] | None) -> tuple[str, str] | None:
    """The round's (outcome, reason) when a candidate's verdict ends it, else None (also
    when there was no candidate)."""
    verdict = record["verdict"] if record is not None else {"outcome": None}
    if counts_as_break(verdict):
        return "broken", str(verdict["reason"])
    if verdict["outcome"] == "error":
        return "error", "adjudication failed: " + str(verdict["reason"])
    return None


def grow_corpus(corpus: list[Item], seen: set[Any], key: Any, item: Item) -> None:
    """Keep ``item`` (an input both trees agreed on) when it showed a new behaviour ``key``
    and the corpus has room."""
    if key not in seen and len(corpus) < MAX_CORPUS:
        seen.add(key)
        corpus.append(item)


def shrink_deadline(config: RoundConfig, deadline: float) -> float:
    """When shrinking a difference must stop: a quarter of the budget (at least 5 s) from
    now, and never that much past the round's own deadline."""
    allowance = max(5.0, 0.25 * config.budget_sec)
    return min(time.monotonic() + allowance, deadline + allowance)


def survived_reason(state: RoundState, what: str) -> str:
    """Why a round that used its budget survived (``what``: inputs, requests)."""
    return f"no upheld candidate in {state.iterations} {what}" + (
        f" ({state.differences} differences, none upheld)" if state.differences else ""
    )


def result_doc(
    config: RoundConfig,
    *,
    outcome: str,
    reason: str,
    started: tuple[float, float],
    state: RoundState,
    corpus_size: int,
    domain: str | None = None,
) -> dict[str, Any]:
    """The round's result document (``started``: wall clock and monotonic start). The HTTP
    domain names itself and counts its server restarts; the CLI domain has neither key."""
    if outcome == "survived" and not reason:
        reason = f"stopped after {len(state.candidates)} candidates, none upheld"
    doc: dict[str, Any] = {"adversary": config.adversary, "driver": "fuzz"}
    if domain is not None:
        doc["domain"] = domain
    doc.update({
        "seed": config.seed,
        "outcome": outcome,
        "reason": reason,
        "started_at": utc_iso(started[0]),
        "duration_sec": round(time.monotonic() - started[1], 3),
        "budget_sec": config.budget_sec,
        "iterations": state.iterations,
        "executions": state.executions,
        "differences": state.differences,
    })  # fmt: skip
    if domain is not None:
        doc["restarts"] = state.restarts
    doc.update({"corpus_size": corpus_size, "candidates": state.candidates, "notes": state.notes})
    return doc


def finish(config: RoundConfig, doc: dict[str, Any], result: Path | None) -> dict[str, Any]:
    """Remove the round's parked trees and the slot's view folder, write ``doc`` to
    ``result`` (atomically) when given, and return it."""
    with contextlib.suppress(OSError):
        shutil.rmtree(config.work / "runner", ignore_errors=True)
        if config.stage_base is not None:
            shutil.rmtree(config.stage_base, ignore_errors=True)
    if result is not None:
        atomic_write_json(result, doc)
    return doc
