"""Stage III's model-free adversary: a byte-mutating differential fuzzer.

It runs inside the verification container. From the seed corpus and the command lines a task
declares (probe.toml ``[metadata] fuzz_seeds / fuzz_entry / fuzz_argv``) it mutates inputs
(bit flips, byte inserts and deletes, interesting bytes: control characters, CR, quotes,
delimiters, BOMs, broken and wide UTF-8; splices between seeds; now and then a mutated command
line, its words taken from the probe's ``fuzz_tokens``, else the argv file's ``tokens``, else
its own command lines), feeds
each input on stdin to ``fuzz_entry`` of both trees and compares exit status and
stdout byte for byte. Both trees are run at the same view path with the candidate
environment (:func:`..candidates.records.candidate_env`), so the program cannot tell them apart any
more than a candidate can. On a difference the input is shrunk by delta debugging (ddmin)
and written as an ordinary ``candidate.sh`` that asserts State A's behaviour; that candidate
goes through the same :func:`..candidates.judge.adjudicate` as every other (reruns, fault codes,
scope scan). The first upheld candidate ends the round (``broken``); a round that finds nothing
upheld within its budget ``survived``; a harness fault (no seeds, State A's entry will not
start) is ``error``. The mutation sequence is fixed by ``--seed``; only how far it gets
depends on the machine.
"""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..boundary import sandbox
from ..boundary.procs import reap_group
from ..candidates.records import CandidateSpec
from ..candidates.scratch import run_lease
from . import view as fuzz_view
from .build import BuildSpec
from .mutate import (
    GENERIC_TOKENS,
    INTERESTING,
    MAX_INPUT_BYTES,
    ddmin,
    mutate,
    mutate_argv,
)
from .observed import SHOWN_CHARS, Observation
from .script import candidate_script, printf_literal, shell_word
from .view import HarnessFault, RoundState, TreeView

__all__ = [
    "GENERIC_TOKENS", "INTERESTING", "HarnessFault", "candidate_script", "ddmin", "mutate",
    "mutate_argv", "printf_literal", "shell_word",
]  # fmt: skip



@dataclass
class FuzzConfig:
    """Everything one fuzz round needs (from the command line)."""

    adversary: str
    original: Path
    submission: Path
    seeds: Path
    entry: str
    argv_sets: list[list[str]]
    seed: int
    budget_sec: float
    run_timeout_sec: float
    spec: CandidateSpec
    work: Path
    argv_mutation_rate: float = 0.1
    max_candidates: int = 3
    stage_base: Path | None = None
    argv_tokens: list[str] = field(default_factory=lambda: list(GENERIC_TOKENS))
    build: BuildSpec | None = None
    """the probe's fuzz_build (:mod:`.build`): each tree is built before its first run,
    and every candidate builds its tree the same way first"""


TREE_PREFIXES = ("/workspace/repo/",)


def entry_in_tree(entry: str) -> str:
    """``fuzz_entry`` as a path relative to the tree, the one form both the fuzz loop and
    the candidate script use: a path under the task's workspace is made relative; any other
    absolute path, or one climbing out with '..', is refused (it would name neither tree)."""
    text = entry.strip()
    for prefix in TREE_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):]
    parts = Path(text).parts
    if not text or Path(text).is_absolute() or ".." in parts:
        raise HarnessFault(
            f"fuzz_entry {entry!r} must be a path inside the tree (e.g. bin/tool), "
            f"or under {TREE_PREFIXES[0]}"
        )
    return Path(text).as_posix()


# --------------------------------------------------------------------------- running


def shell_names(cwd: str, program: str) -> dict[str, str]:
    """What a candidate's shell adds to the environment of a program it starts (bash exports
    PWD and SHLVL and sets ``_`` to the program's path): the fuzzer's program gets them too,
    so these names do not tell it from a candidate run (issue 32)."""
    return {"PWD": cwd, "SHLVL": "1", "_": program}


class EntryRunner:
    """Runs the entry of either tree from one shared view path (:class:`.view.TreeView`),
    copied to the slot's ``target`` as adjudication runs it (:meth:`.TreeView.place`); every
    run starts and ends with the slot emptied (no process, no file of its uid left)."""

    def __init__(self, config: FuzzConfig) -> None:
        self.config = config
        self.slot = config.spec.slot
        self.trees = TreeView(config)
        self.view = self.trees.view
        self.counter = 0

    def park(self) -> None:
        """Take whichever tree is mounted out of the view (see :meth:`TreeView.park`)."""
        self.trees.park()

    def run(self, role: str, argv: Sequence[str], data: bytes) -> Observation:
        failed = self.trees.build_failed.get(role)
        if failed is not None:  # the submission's own failure: nothing of it starts
            return Observation(None, b"", failed.encode()[-SHOWN_CHARS:], False, 0.0,
                               f"fuzz_build failed: {failed[:200]}")
        self.trees.mount(role)
        self.counter += 1
        home = self.trees.workdir()
        env = self.trees.env(home)
        # The candidate /tmp is the run lease's: a program run here holds it as one a
        # candidate starts does (its /tmp group only while it holds it, /tmp and /dev/shm
        # emptied around it), so no other round's run sees what it leaves and none of it
        # is in the way of another's lease (seen: "cannot empty the candidate /tmp").
        tree = self.trees.place(home)  # before the lease: the copy is the slot's own
        program = str(tree / entry_in_tree(self.config.entry))
        cwd = str(tree if tree != self.view else home)
        with run_lease() as groups:
            started = time.monotonic()
            try:
                proc = sandbox.spawn(
                    [program, *argv],
                    slot=self.slot,
                    cwd=cwd,
                    env={**env, **shell_names(cwd, program)},
                    groups=groups,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            except OSError as exc:
                return Observation(None, b"", b"", False, time.monotonic() - started, str(exc))
            timed_out = False
            try:
                out, err = proc.communicate(data, timeout=self.config.run_timeout_sec)
            except subprocess.TimeoutExpired:
                timed_out = True
                self._end(proc.pid)
                out, err = proc.communicate()
            self._end(proc.pid)
        return Observation(proc.returncode, out, err, timed_out, time.monotonic() - started)

    def _end(self, pid: int) -> None:
        if sandbox.enabled():
            sandbox.kill_slot(self.slot)  # its scratch goes when the next run starts,
            try:  # what other slots could see goes now
                sandbox.wipe_shared(self.slot)
            except sandbox.SandboxError as exc:
                raise HarnessFault(str(exc)) from None
        else:
            reap_group(pid, grace_sec=1.0)

    def pair(self, argv: Sequence[str], data: bytes) -> tuple[Observation, Observation]:
        # Alternate which tree goes first so a warm cache never favours one side.
        order = ("original", "submission") if self.counter % 4 == 0 else ("submission", "original")
        got = {role: self.run(role, argv, data) for role in order}
        return got["original"], got["submission"]


# --------------------------------------------------------------------------- candidates


# --------------------------------------------------------------------------- the round


def load_seeds(folder: Path, skip: Path | None) -> list[bytes]:
    """Every regular file of the seed folder (sorted), except the argv file."""
    if not folder.is_dir():
        raise HarnessFault(f"seed folder {folder} does not exist")
    seeds = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and (skip is None or path.resolve() != skip.resolve()):
            seeds.append(path.read_bytes()[:MAX_INPUT_BYTES])
    if not seeds:
        raise HarnessFault(f"seed folder {folder} holds no seed files")
    return seeds


def argv_vocabulary(
    path: Path | None, argv_sets: Sequence[Sequence[str]], probe_tokens: Sequence[str] | None = None
) -> list[str]:
    """The words argv mutations insert: the probe's ``[metadata] fuzz_tokens`` when it has
    them, else the argv file's ``tokens`` list, else every word of its command lines; plus a
    few generic ones. Never another task's."""
    declared: list[str] = [str(word) for word in probe_tokens or ()]
    if path is not None and not declared:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text(encoding="utf-8"))
            found = data.get("tokens") if isinstance(data, dict) else None
            if isinstance(found, list):
                declared = [str(word) for word in found if isinstance(word, str)]
    if not declared:
        declared = [word for argv in argv_sets for word in argv]
    return list(dict.fromkeys([*declared, *GENERIC_TOKENS]))


def load_argv_sets(path: Path | None) -> list[list[str]]:
    """Command lines from a JSON file: ``{"argv": [[...], ...]}`` or a bare list."""
    if path is None:
        return [[]]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessFault(f"cannot read argv file {path}: {exc}") from None
    sets = data.get("argv") if isinstance(data, dict) else data
    if not isinstance(sets, list) or not all(
        isinstance(item, list) and all(isinstance(word, str) for word in item) for item in sets
    ):
        raise HarnessFault(f"{path}: expected a list of argv lists (strings)")
    return [list(item) for item in sets] or [[]]


def _adjudicate(
    config: FuzzConfig,
    state: RoundState,
    runner: EntryRunner,
    argv: list[str],
    data: bytes,
    shrink_deadline: float,
) -> dict[str, Any] | None:
    """Shrink a difference, write its candidate, adjudicate it; the candidate record."""

    def differs(candidate: bytes) -> bool:
        state.executions += 2
        a, b = runner.pair(argv, candidate)
        if a.start_error is not None:
            return False
        return a.signature() != b.signature()

    shrunk, tests = ddmin(data, differs, shrink_deadline)
    # ddmin kept ``shrunk`` because a run of it differed. A submission whose answer moves
    # between runs (issue 32) may agree this time: look up to ``reruns`` times before
    # dropping it, so its nondeterminism reaches adjudication instead of hiding it.
    for _ in range(max(1, config.spec.reruns)):
        a, b = runner.pair(argv, shrunk)
        state.executions += 2
        if a.start_error is not None or a.signature() != b.signature():
            break
    if a.start_error is not None or a.signature() == b.signature():
        state.notes.append("a difference did not reproduce after shrinking; dropped")
        return None
    if a.timed_out:
        state.notes.append("State A timed out on a differing input; not a usable candidate")
        return None
    script = candidate_script(
        adversary=config.adversary,
        seed=config.seed,
        entry=entry_in_tree(config.entry),
        argv=argv,
        data=shrunk,
        original_len=len(data),
        expected=a,
        build=None if config.build is None else str(config.build.script),
    )
    runner.park()
    found = {
        "argv": argv,
        "input_hex": shrunk.hex(),
        "input_bytes": len(shrunk),
        "original_input_bytes": len(data),
        "shrink_tests": tests,
    }
    record = fuzz_view.judge_candidate(config, state, script, found, (a, b))
    state.candidates.append(record)
    return record


def run_round(config: FuzzConfig, seeds: list[bytes]) -> dict[str, Any]:
    """The whole round; returns the result document (outcome broken|survived|error)."""
    started_wall = time.time()
    started = time.monotonic()
    deadline = started + config.budget_sec
    state = RoundState()
    outcome, reason = "survived", ""
    rng = random.Random(config.seed)
    corpus = list(seeds)
    seen: set[tuple[Any, ...]] = set()
    try:
        entry_in_tree(config.entry)
        runner = EntryRunner(config)
        state.notes.extend(runner.trees.build_notes)
        probe_a, _ = runner.pair(config.argv_sets[0], seeds[0])
        state.executions += 2
        if probe_a.start_error is not None:
            raise HarnessFault(f"{config.entry} of State A does not start: {probe_a.start_error}")
        while time.monotonic() < deadline and len(state.candidates) < config.max_candidates:
            state.iterations += 1
            argv = list(rng.choice(config.argv_sets))
            if rng.random() < config.argv_mutation_rate:
                argv = mutate_argv(argv, rng, config.argv_tokens)
            data = mutate(rng.choice(corpus), rng, corpus)
            a, b = runner.pair(argv, data)
            state.executions += 2
            if a.start_error is not None:
                raise HarnessFault(f"{config.entry} of State A stopped starting: {a.start_error}")
            if a.signature() == b.signature():
                fuzz_view.grow_corpus(corpus, seen, (a.exit_code, len(a.stdout) // 64), data)
                continue
            state.differences += 1
            until = fuzz_view.shrink_deadline(config, deadline)
            record = _adjudicate(config, state, runner, argv, data, until)
            ended = fuzz_view.round_end(record)
            if ended is not None:
                outcome, reason = ended
                break
        else:
            reason = fuzz_view.survived_reason(state, "inputs")
    except HarnessFault as exc:
        outcome, reason = "error", str(exc)
    except OSError as exc:
        outcome, reason = "error", f"fuzzer I/O failure: {exc}"
    return fuzz_view.result_doc(
        config, outcome=outcome, reason=reason, started=(started_wall, started), state=state,
        corpus_size=len(corpus),
    )  # fmt: skip


def main_fuzz(config: FuzzConfig, argv_file: Path | None, result: Path | None) -> dict[str, Any]:
    """Load seeds, run the round, clean the scratch folder, write and return the result."""
    try:
        seeds = load_seeds(config.seeds, argv_file)
        doc = run_round(config, seeds)
    except HarnessFault as exc:
        doc = {
            "adversary": config.adversary,
            "driver": "fuzz",
            "seed": config.seed,
            "outcome": "error",
            "reason": str(exc),
            "iterations": 0,
            "executions": 0,
            "differences": 0,
            "candidates": [],
            "notes": [],
        }
    return fuzz_view.finish(config, doc, result)
