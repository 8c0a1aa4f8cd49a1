"""Stage III's model-free adversary: a byte-mutating differential fuzzer.

It runs inside the verification container. From the seed corpus and the command lines a task
declares (probe.toml ``[metadata] fuzz_seeds / fuzz_entry / fuzz_argv``) it mutates inputs
(bit flips, byte inserts and deletes, interesting bytes: control characters, CR, quotes,
delimiters, BOMs, broken and wide UTF-8; splices between seeds; now and then a mutated command
line, its words taken from the probe's ``fuzz_tokens``, else the argv file's ``tokens``, else
its own command lines), feeds
each input on stdin to ``fuzz_entry`` of both trees and compares exit status and
stdout byte for byte. Both trees are run at the same view path with the candidate
environment (:func:`.candidate.candidate_env`), so the program cannot tell them apart any
more than a candidate can. On a difference the input is shrunk by delta debugging (ddmin)
and written as an ordinary ``candidate.sh`` that asserts State A's behaviour; that candidate
goes through the same :func:`.candidate.adjudicate` as every other (reruns, fault codes, scope
scan). The first upheld candidate ends the round (``broken``); a round that finds nothing
upheld within its budget ``survived``; a harness fault (no seeds, State A's entry will not
start) is ``error``. The mutation sequence is fixed by ``--seed``; only how far it gets
depends on the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import sandbox
from .candidate import (
    CandidateSpec,
    StagingError,
    adjudicate,
    candidate_env,
    check_original,
    stage_copy,
)
from .envelope import atomic_write_json, utc_iso
from .fuzz_mutate import (
    GENERIC_TOKENS,
    INTERESTING,
    MAX_INPUT_BYTES,
    ddmin,
    mutate,
    mutate_argv,
)
from .lockdown import stat_signature
from .procs import reap_group

__all__ = ["GENERIC_TOKENS", "INTERESTING", "ddmin", "mutate", "mutate_argv"]

MAX_CORPUS = 256
SHOWN_CHARS = 2000
CHUNK = 48


@dataclass(frozen=True)
class Observation:
    """One run of the entry on one tree."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration_sec: float
    start_error: str | None = None

    def signature(self) -> tuple[Any, ...]:
        """What two trees must agree on: how the run ended and stdout, byte for byte."""
        return (self.start_error is not None, self.timed_out, self.exit_code, self.stdout)

    def to_dict(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "duration_sec": round(self.duration_sec, 3),
            "start_error": self.start_error,
            "stdout": self.stdout[:SHOWN_CHARS].decode("utf-8", "backslashreplace"),
            "stdout_bytes": len(self.stdout),
            "stderr": self.stderr[-SHOWN_CHARS:].decode("utf-8", "backslashreplace"),
        }


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
    """where the slot sees the tree under test (default: inside ``work``)"""


@dataclass
class FuzzState:
    iterations: int = 0
    executions: int = 0
    differences: int = 0
    candidates: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class HarnessFault(Exception):
    """The fuzzer itself cannot go on (not a finding about the submission)."""


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


class EntryRunner:
    """Runs the entry of either tree at one shared view path (trees swapped by rename).

    Both parked copies belong to the grader in its private folder; the view (where the
    slot's uid runs them, read-only) is reachable by that slot alone. State A's copy is
    hashed when it is parked and its stat signature re-checked before every mount; every
    run starts and ends with the slot emptied (no process, no file of its uid left)."""

    def __init__(self, config: FuzzConfig) -> None:
        self.config = config
        self.slot = config.spec.slot
        base = config.work / "runner"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        shown = config.stage_base or base
        shown.mkdir(parents=True, exist_ok=True)
        if sandbox.enabled():
            sandbox.join_slot_groups([self.slot])
            sandbox.give_to_slot(shown, self.slot)
        self.view = shown / "view"
        shutil.rmtree(self.view, ignore_errors=True)
        self.parked = {"original": base / "parked-original", "submission": base / "parked-sub"}
        self.candidate = shown / "candidate"
        shutil.rmtree(self.candidate, ignore_errors=True)
        self.home = base / "work"
        self.candidate.mkdir()
        try:
            for role, tree in (("original", config.original), ("submission", config.submission)):
                stage_copy(tree, self.parked[role])
            check_original(config.spec, self.parked["original"], "the fuzzer's copy of State A")
        except StagingError as exc:
            raise HarnessFault(str(exc)) from None
        self.signature = stat_signature(self.parked["original"])
        self.current: str | None = None
        self.counter = 0

    def _mount(self, role: str) -> None:
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

    def _workdir(self) -> Path:
        if sandbox.enabled():
            sandbox.reset(self.slot, remake=("home", "tmp", "work"))
            return sandbox.scratch_dir(self.slot)
        shutil.rmtree(self.home, ignore_errors=True)
        for sub in ("home", "tmp", "work"):
            (self.home / sub).mkdir(parents=True)
        return self.home

    def run(self, role: str, argv: Sequence[str], data: bytes) -> Observation:
        self._mount(role)
        self.counter += 1
        home = self._workdir()
        # The program under test gets the candidate environment with a role-neutral token:
        # both trees run at the same view path with the same environment.
        env = candidate_env(
            self.config.spec, self.view, self.candidate / "candidate.sh", home / "work",
            token="fuzz", name="fuzz", home=home / "home", tmpdir=home / "tmp",
        )  # fmt: skip
        started = time.monotonic()
        try:
            proc = sandbox.spawn(
                [str(self.view / entry_in_tree(self.config.entry)), *argv],
                slot=self.slot,
                cwd=str(home),
                env=env,
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
            sandbox.kill_slot(self.slot)  # its files go when the next run starts
        else:
            reap_group(pid, grace_sec=1.0)

    def pair(self, argv: Sequence[str], data: bytes) -> tuple[Observation, Observation]:
        # Alternate which tree goes first so a warm cache never favours one side.
        order = ("original", "submission") if self.counter % 4 == 0 else ("submission", "original")
        got = {role: self.run(role, argv, data) for role in order}
        return got["original"], got["submission"]


# --------------------------------------------------------------------------- candidates


def printf_literal(data: bytes) -> str:
    """``data`` as the body of a single-quoted bash printf format (octal for the rest)."""
    out: list[str] = []
    for byte in data:
        ch = chr(byte)
        if ch == "%":
            out.append("%%")
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "'" or byte < 0x20 or byte > 0x7E:
            out.append(f"\\{byte:03o}")
        else:
            out.append(ch)
    return "".join(out)


def _printf_block(data: bytes, target: str) -> list[str]:
    if not data:
        return [f': > "{target}"']
    lines = ["{"]
    for start in range(0, len(data), CHUNK):
        lines.append(f"  printf -- '{printf_literal(data[start : start + CHUNK])}'")
    lines.append(f'}} > "{target}"')
    return lines


def shell_word(word: str) -> str:
    """A bash word that expands to exactly ``word``."""
    if word and all(c.isalnum() or c in "-_=.,/:+@" for c in word):
        return word
    return (
        "$'"
        + "".join(
            c
            if c.isalnum() or c in " -_=.,/:+@"
            else f"\\x{ord(c):02x}"
            if ord(c) < 0x80
            else "".join(f"\\x{b:02x}" for b in c.encode("utf-8"))
            for c in word
        )
        + "'"
    )


def candidate_script(
    *,
    adversary: str,
    seed: int,
    entry: str,
    argv: Sequence[str],
    data: bytes,
    original_len: int,
    expected: Observation,
) -> str:
    """candidate.sh: feed ``data`` to the entry and demand State A's exit status and stdout."""
    words = " ".join(shell_word(word) for word in argv)
    command = f'"$SRB_TARGET/{entry}"' + (f" {words}" if words else "")
    header = [
        "#!/bin/bash",
        f"# srb fuzz adversary {adversary} (seed {seed}): a {len(data)}-byte input on stdin,",
        f"# shrunk by delta debugging from {original_len} bytes. State A exits"
        f" {expected.exit_code} and prints {len(expected.stdout)} bytes;",
        "# anything else is a behavioural difference.",
        "set -u",
        'scratch="${TMPDIR:-/tmp}/fuzz-candidate"',
        'mkdir -p "$scratch"',
    ]
    body = [
        *_printf_block(data, "$scratch/input"),
        *_printf_block(expected.stdout, "$scratch/expected"),
        f'{command} < "$scratch/input" > "$scratch/actual" 2> "$scratch/stderr"',
        "status=$?",
        f'if [ "$status" -ne {expected.exit_code} ]; then',
        f'  echo "exit status $status; State A exits {expected.exit_code}" >&2',
        "  exit 1",
        "fi",
        'if ! cmp -s "$scratch/expected" "$scratch/actual"; then',
        '  echo "stdout differs from State A:" >&2',
        '  head -c 2000 "$scratch/actual" >&2',
        "  exit 1",
        "fi",
        "exit 0",
    ]
    return "\n".join(header + body) + "\n"


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
    state: FuzzState,
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
    a, b = runner.pair(argv, shrunk)
    state.executions += 2
    if a.start_error is not None or a.signature() == b.signature():
        state.notes.append("a difference did not reproduce after shrinking; dropped")
        return None
    if a.timed_out:
        state.notes.append("State A timed out on a differing input; not a usable candidate")
        return None
    index = len(state.candidates)
    script = candidate_script(
        adversary=config.adversary,
        seed=config.seed,
        entry=entry_in_tree(config.entry),
        argv=argv,
        data=shrunk,
        original_len=len(data),
        expected=a,
    )
    runner.park()
    folder = config.work / "candidates" / f"{index:02d}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "candidate.sh").write_text(script, encoding="utf-8")
    verdict = adjudicate(
        folder,
        config.original,
        config.submission,
        config.spec,
        stage_base=(config.stage_base or config.work) / "adjudication",
    ).to_dict()
    record = {
        "index": index,
        "argv": argv,
        "input_hex": shrunk.hex(),
        "input_bytes": len(shrunk),
        "original_input_bytes": len(data),
        "shrink_tests": tests,
        "files": {"candidate.sh": script},
        "observed": {"original": a.to_dict(), "submission": b.to_dict()},
        "verdict": verdict,
    }
    state.candidates.append(record)
    return record


def run_round(config: FuzzConfig, seeds: list[bytes]) -> dict[str, Any]:
    """The whole round; returns the result document (outcome broken|survived|error)."""
    started_wall = time.time()
    started = time.monotonic()
    deadline = started + config.budget_sec
    state = FuzzState()
    outcome, reason = "survived", ""
    rng = random.Random(config.seed)
    corpus = list(seeds)
    seen: set[tuple[Any, ...]] = set()
    try:
        entry_in_tree(config.entry)
        runner = EntryRunner(config)
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
                key = (a.exit_code, len(a.stdout) // 64)
                if key not in seen and len(corpus) < MAX_CORPUS:
                    seen.add(key)
                    corpus.append(data)
                continue
            state.differences += 1
            allowance = max(5.0, 0.25 * config.budget_sec)
            shrink_deadline = min(time.monotonic() + allowance, deadline + allowance)
            record = _adjudicate(config, state, runner, argv, data, shrink_deadline)
            if record is None:
                continue
            verdict = record["verdict"]
            if verdict["outcome"] == "upheld":
                outcome, reason = "broken", verdict["reason"]
                break
            if verdict["outcome"] == "error":
                outcome, reason = "error", "adjudication failed: " + verdict["reason"]
                break
        else:
            reason = f"no upheld candidate in {state.iterations} inputs" + (
                f" ({state.differences} differences, none upheld)" if state.differences else ""
            )
    except HarnessFault as exc:
        outcome, reason = "error", str(exc)
    except OSError as exc:
        outcome, reason = "error", f"fuzzer I/O failure: {exc}"
    if outcome == "survived" and not reason:
        reason = f"stopped after {len(state.candidates)} candidates, none upheld"
    return {
        "adversary": config.adversary,
        "driver": "fuzz",
        "seed": config.seed,
        "outcome": outcome,
        "reason": reason,
        "started_at": utc_iso(started_wall),
        "duration_sec": round(time.monotonic() - started, 3),
        "budget_sec": config.budget_sec,
        "iterations": state.iterations,
        "executions": state.executions,
        "differences": state.differences,
        "corpus_size": len(corpus),
        "candidates": state.candidates,
        "notes": state.notes,
    }


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
    with contextlib.suppress(OSError):
        shutil.rmtree(config.work / "runner", ignore_errors=True)
        if config.stage_base is not None:
            shutil.rmtree(config.stage_base, ignore_errors=True)
    if result is not None:
        atomic_write_json(result, doc)
    return doc
