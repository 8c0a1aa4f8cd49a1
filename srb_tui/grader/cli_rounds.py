"""The grader's Stage III subcommands: ``candidate``, ``fuzz`` and ``fuzz-http``.

Their parsers' options and their runners; :mod:`.cli` declares a subcommand's options only
when it is the one invoked, and imports this module only then.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .candidates.env import load_salt
from .candidates.judge import adjudicate, parse_exit_codes
from .candidates.records import (
    DEFAULT_FAULT_CODES,
    NONDETERMINISM_RULES,
    CandidateSpec,
    RunObservation,
)
from .contract import EXIT_OK, EXIT_UNUSABLE
from .envelope import atomic_write_json
from .fuzzing.argv import FuzzConfig, HarnessFault, argv_vocabulary, load_argv_sets, main_fuzz
from .fuzzing.build import DEFAULT_BUILD_TIMEOUT_SEC, BuildSpec
from .fuzzing.http import DEFAULT_HEADERS, HttpConfig, main_fuzz_http
from .manifests.probe import fault_codes_arg

DEFAULT_FAULT_CODES_ARG = fault_codes_arg(())


def candidate_args(cand: argparse.ArgumentParser) -> None:
    cand.add_argument("--candidate", required=True, help="folder holding the candidate's files")
    cand.add_argument("--original", required=True)
    cand.add_argument("--submission", required=True)
    cand.add_argument(
        "--command-json",
        required=True,
        help='candidate_command as a JSON list, e.g. ["bash", "run-candidate.sh"]',
    )
    cand.add_argument("--reruns", type=int, default=3)
    cand.add_argument("--timeout", type=float, default=300.0)
    cand.add_argument("--fault-codes", default=DEFAULT_FAULT_CODES_ARG,
                      help="e.g. 64-78 or 1,64-78")
    cand.add_argument("--deny-command", action="append", default=[])
    cand.add_argument("--stage-base", help="where salted views are staged (default: TMPDIR)")
    cand.add_argument("--result", help="also write the verdict JSON here (atomically)")
    cand.add_argument("--progress", help="append one JSON line here per execution as it ends")
    cand.add_argument("--slot", type=int, default=0, help="submission identity to run as")
    cand.add_argument("--original-digest", help="State A's tree digest (checked before use)")
    cand.add_argument("--name", help="the candidate's short name (SRB_CANDIDATE_NAME)")
    _contract_args(cand)


def fuzz_args(fuzz: argparse.ArgumentParser) -> None:
    fuzz.add_argument("--adversary", required=True, help="adversary id (for the record)")
    fuzz.add_argument("--original", required=True)
    fuzz.add_argument("--submission", required=True)
    fuzz.add_argument("--seeds", required=True, help="folder of seed inputs")
    fuzz.add_argument("--entry", required=True, help="program to run, relative to each tree")
    fuzz.add_argument("--argv-file", help='JSON {"argv": [[...], ...]} of command lines')
    fuzz.add_argument("--seed", type=int, default=0)
    fuzz.add_argument("--budget", type=float, required=True, help="seconds of fuzzing")
    fuzz.add_argument("--run-timeout", type=float, default=20.0)
    fuzz.add_argument("--argv-mutation-rate", type=float, default=0.1)
    fuzz.add_argument("--max-candidates", type=int, default=3)
    fuzz.add_argument("--command-json", required=True, help="candidate_command as a JSON list")
    fuzz.add_argument("--reruns", type=int, default=3)
    fuzz.add_argument("--timeout", type=float, default=300.0, help="candidate timeout")
    fuzz.add_argument("--fault-codes", default=DEFAULT_FAULT_CODES_ARG)
    fuzz.add_argument("--deny-command", action="append", default=[])
    _contract_args(fuzz)
    fuzz.add_argument("--work", required=True, help="scratch folder")
    fuzz.add_argument("--result", help="write the round's result JSON here (atomically)")
    fuzz.add_argument("--slot", type=int, default=0, help="submission identity to run as")
    fuzz.add_argument("--original-digest", help="State A's tree digest (checked before use)")
    fuzz.add_argument("--stage-base", help="where the slot sees the tree under test")
    fuzz.add_argument("--tokens-json", help="argv mutation words (probe [metadata] fuzz_tokens)")
    _build_args(fuzz)


def fuzz_http_args(web: argparse.ArgumentParser) -> None:
    web.add_argument("--adversary", required=True)
    web.add_argument("--original", required=True)
    web.add_argument("--submission", required=True)
    web.add_argument("--seeds", required=True, help='JSON {"requests": [...], "vocabulary": {}}')
    web.add_argument("--server-json", required=True,
                     help='server argv relative to the tree, e.g. ["bin/app", "--port", "{port}"]')
    web.add_argument("--headers-json", help="response headers compared, as a JSON list")
    web.add_argument("--url-env", default="SERVICE_URL", help="variable candidates read")
    web.add_argument("--seed", type=int, default=0)
    web.add_argument("--budget", type=float, required=True)
    web.add_argument("--run-timeout", type=float, default=10.0, help="per request, seconds")
    web.add_argument("--start-timeout", type=float, default=15.0, help="server start, seconds")
    web.add_argument("--max-candidates", type=int, default=3)
    web.add_argument("--command-json", required=True)
    web.add_argument("--reruns", type=int, default=3)
    web.add_argument("--timeout", type=float, default=300.0, help="candidate timeout")
    web.add_argument("--fault-codes", default=DEFAULT_FAULT_CODES_ARG)
    web.add_argument("--deny-command", action="append", default=[])
    _contract_args(web)
    web.add_argument("--work", required=True)
    web.add_argument("--result")
    web.add_argument("--slot", type=int, default=0)
    web.add_argument("--original-digest")
    web.add_argument("--stage-base")
    _build_args(web)


def trees_missing(args: argparse.Namespace) -> bool:
    """Say (on stderr) which of --original / --submission is not a folder; True if one is."""
    for label, value in (("--original", args.original), ("--submission", args.submission)):
        if not Path(value).is_dir():
            print(f"grader: {label} {value} is not a folder", file=sys.stderr)
            return True
    return False


def _build_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--build", help="fuzz_build: `sh BUILD TREE` in each tree first")
    parser.add_argument("--build-timeout", type=float, default=DEFAULT_BUILD_TIMEOUT_SEC)


def _build_spec(args: argparse.Namespace) -> BuildSpec | None:
    if not args.build:
        return None
    return BuildSpec(Path(args.build), timeout_sec=args.build_timeout)


def _contract_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--nondeterminism",
        choices=NONDETERMINISM_RULES,
        default="reject",
        help="a submission that fails some reruns and passes others while State A passes "
        "every one: recorded and not counted (reject, the published grader) or a break",
    )
    parser.add_argument(
        "--token-salt-file",
        help="grader-only file holding the stage's SRB_TARGET_TOKEN salt (created if absent)",
    )
    parser.add_argument(
        "--network-allowed", action="store_true", help="do not set SRB_NETWORK=denied"
    )
    parser.add_argument(
        "--behaviour-only",
        action="store_true",
        help="the candidate cannot read the tree, and one that starts no program of it on "
        "either side is invalid (probe.toml [metadata] behaviour_only)",
    )
    parser.add_argument(
        "--no-boundary",
        action="store_true",
        help="candidate and the programs it starts share one uid (to measure the boundary)",
    )


def _candidate_spec(args: argparse.Namespace) -> CandidateSpec:
    """The CandidateSpec of --command-json, --reruns, --timeout, --fault-codes, --deny-command;
    raises ValueError naming what is wrong."""
    command = json.loads(args.command_json)
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(part, str) for part in command)
    ):
        raise ValueError("must be a non-empty JSON list of strings")
    codes = parse_exit_codes(args.fault_codes) if args.fault_codes else DEFAULT_FAULT_CODES
    return CandidateSpec(
        command=tuple(command),
        reruns=args.reruns,
        timeout_sec=args.timeout,
        fault_exit_codes=codes,
        deny_commands=tuple(args.deny_command),
        slot=args.slot,
        original_digest=args.original_digest or None,
        token_salt=load_salt(Path(args.token_salt_file) if args.token_salt_file else None),
        network_allowed=bool(args.network_allowed),
        boundary=not getattr(args, "no_boundary", False),
        nondeterminism=getattr(args, "nondeterminism", "reject"),
        behaviour_only=bool(getattr(args, "behaviour_only", False)),
    )


def _progress_writer(path: str | None) -> Callable[[RunObservation], None] | None:
    """A callback appending each execution (role, attempt, exit, duration) as a JSON line
    to ``path``, flushed at once so a watcher outside the container can read it."""
    if not path:
        return None

    def write(run: RunObservation) -> None:
        line = {"role": run.role, "attempt": run.attempt, "exit_code": run.exit_code,
                "timed_out": run.timed_out, "duration_sec": run.duration_sec}
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    return write


def run_candidate(args: argparse.Namespace) -> int:
    try:
        spec = _candidate_spec(args)
    except ValueError as exc:
        print(f"grader: bad candidate options: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    verdict = adjudicate(
        args.candidate, args.original, args.submission, spec, stage_base=args.stage_base,
        name=args.name,
        on_run=_progress_writer(args.progress),
    ).to_dict()
    if args.result:
        atomic_write_json(args.result, verdict)
    print(json.dumps(verdict, ensure_ascii=False))
    return EXIT_OK


def run_fuzz(args: argparse.Namespace) -> int:
    try:
        spec = _candidate_spec(args)
        argv_file = Path(args.argv_file) if args.argv_file else None
        argv_sets = load_argv_sets(argv_file)
        _json_words(args.tokens_json)
    except (ValueError, HarnessFault) as exc:
        print(f"grader: bad fuzz options: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if trees_missing(args):
        return EXIT_UNUSABLE
    config = FuzzConfig(
        **_round_options(args, spec),
        entry=args.entry,
        argv_sets=argv_sets,
        run_timeout_sec=args.run_timeout,
        argv_mutation_rate=args.argv_mutation_rate,
        argv_tokens=argv_vocabulary(argv_file, argv_sets, _json_words(args.tokens_json)),
    )
    return _round_done(main_fuzz(config, argv_file, Path(args.result) if args.result else None))


def _round_options(args: argparse.Namespace, spec: CandidateSpec) -> dict[str, Any]:
    """The options both fuzzers take alike (the trees, seeds, budget, work and build)."""
    return {
        "adversary": args.adversary,
        "original": Path(args.original).resolve(),
        "submission": Path(args.submission).resolve(),
        "seeds": Path(args.seeds),
        "seed": args.seed,
        "budget_sec": args.budget,
        "spec": spec,
        "work": Path(args.work),
        "max_candidates": args.max_candidates,
        "stage_base": Path(args.stage_base) if args.stage_base else None,
        "build": _build_spec(args),
    }


def _round_done(doc: dict[str, Any]) -> int:
    """Print a fuzz round's outcome line; the exit status of a round that ran."""
    print(json.dumps({k: doc[k] for k in ("adversary", "outcome", "reason")}, ensure_ascii=False))
    return EXIT_OK


def _json_words(text: str | None) -> list[str] | None:
    """A JSON list of strings (None when not given); ValueError names what is wrong."""
    if text is None:
        return None
    words = json.loads(text)
    if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
        raise ValueError(f"expected a JSON list of strings, got {text[:80]!r}")
    return words


def run_fuzz_http(args: argparse.Namespace) -> int:
    try:
        spec = _candidate_spec(args)
        server = _json_words(args.server_json) or []
        headers = _json_words(args.headers_json)
        if not server:
            raise ValueError("--server-json must name the server's argv")
    except ValueError as exc:
        print(f"grader: bad fuzz-http options: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if trees_missing(args):
        return EXIT_UNUSABLE
    config = HttpConfig(
        **_round_options(args, spec),
        server=server,
        headers=[h.lower() for h in headers] if headers else list(DEFAULT_HEADERS),
        request_timeout_sec=args.run_timeout,
        start_timeout_sec=args.start_timeout,
        url_env=args.url_env,
    )
    return _round_done(main_fuzz_http(config, Path(args.result) if args.result else None))
