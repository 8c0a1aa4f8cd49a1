"""Stage III candidate execution and adjudication against real processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from srb_tui.grader.candidates.judge import adjudicate, adversary_outcome, parse_exit_codes
from srb_tui.grader.candidates.records import CandidateSpec, CandidateVerdict, counts_as_break
from srb_tui.grader.candidates.scope import scan_candidate

from .helpers import REPO, grader_cmd, write_tree

RUNNER = (
    'role="$1"\ncase "$role" in original|submission) ;; *) exit 99;; esac\n'
    'bash "$SRB_CANDIDATE"\n'
)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    original = write_tree(tmp_path / "original", {"tool.sh": "echo 42\n", "setup.py": "#\n"})
    submission = write_tree(tmp_path / "submission", {"tool.sh": "echo 41\n", "pkg.json": "{}"})
    flag = tmp_path / "flaky.flag"
    flaky = write_tree(
        tmp_path / "flaky",
        {"tool.sh": f'if [ -e "{flag}" ]; then echo 42; else touch "{flag}"; echo 0; fi\n'},
    )
    hanging = write_tree(tmp_path / "hanging", {"tool.sh": "sleep 60\necho 42\n"})
    runner = write_tree(tmp_path / "harness", {"run-candidate.sh": RUNNER}) / "run-candidate.sh"
    return {
        "original": original,
        "submission": submission,
        "flaky": flaky,
        "hanging": hanging,
        "runner": runner,
        "tmp": tmp_path,
    }


def spec(world: dict[str, Path], **kwargs: object) -> CandidateSpec:
    options: dict[str, object] = {
        "command": ("bash", str(world["runner"])),
        "reruns": 3,
        "timeout_sec": 5.0,
        "grace_sec": 0.3,
    }
    options.update(kwargs)
    return CandidateSpec(**options)  # type: ignore[arg-type]


def candidate(world: dict[str, Path], name: str, body: str) -> Path:
    return write_tree(world["tmp"] / "candidates" / name, {"test.sh": body})


def judge(
    world: dict[str, Path], body: str, submission: str = "submission", **kwargs: object
) -> CandidateVerdict:
    cand = candidate(world, "c", body)
    return adjudicate(
        cand,
        world["original"],
        world[submission],
        spec(world, **kwargs),
        stage_base=world["tmp"] / "stage",
    )


EQUALS_42 = '[ "$(bash "$SRB_TARGET/tool.sh")" = 42 ]\n'


def test_pass_on_both_is_not_a_break(world: dict[str, Path]) -> None:
    verdict = judge(world, 'out=$(bash "$SRB_TARGET/tool.sh")\n[ -n "$out" ]\n')
    assert (verdict.outcome, verdict.reason) == (
        "invalid",
        "passes on the submission too: not a break",
    )
    assert len(verdict.runs) == 2


def test_pass_a_fail_b_reproducibly_is_upheld(world: dict[str, Path]) -> None:
    verdict = judge(world, EQUALS_42)
    assert verdict.outcome == "upheld"
    assert verdict.reason == ("passes on State A and fails on the submission, reproduced 3 times")
    assert sorted(run.role for run in verdict.runs) == ["original"] * 3 + ["submission"] * 3
    assert [run.exit_code for run in verdict.runs if run.role == "submission"] == [1, 1, 1]
    firsts = [verdict.runs[i].role for i in (0, 2, 4)]
    assert firsts[0] == "original" and "submission" in firsts[1:], "orders are mixed"
    left = [p.name for p in (world["tmp"] / "stage").iterdir()]
    assert left == [], "nothing of a run outlives it, SRB_WORK included"


def test_nondeterministic_submission_is_its_own_verdict(world: dict[str, Path]) -> None:
    """Issue 32: State A passes all three attempts, the submission fails the first and
    passes the others. The published rule records it without counting it (the published
    grader rejects an unstable outcome); srb's own tasks count it as a break."""
    published = judge(world, EQUALS_42, submission="flaky")
    assert published.outcome == "nondeterministic"
    assert published.reason.startswith(
        "nondeterministic on the submission: State A passed all 3 attempts, the submission "
        "failed attempt 1 and passed 2, 3 of the same candidate; not counted"
    ), published.reason
    assert len(published.runs) == 6, "every attempt runs: State A is seen to pass each one"
    assert [r.passed for r in published.runs if r.role == "original"] == [True] * 3
    assert not counts_as_break(published) and not published.to_dict()["counts_as_break"]
    assert adversary_outcome([published]) == "survived"
    (world["tmp"] / "flaky.flag").unlink()  # the flaky tree starts over
    ours = judge(world, EQUALS_42, submission="flaky", nondeterminism="break")
    assert ours.outcome == "nondeterministic" and "a difference from State A" in ours.reason
    assert counts_as_break(ours) and ours.to_dict()["counts_as_break"] is True
    assert adversary_outcome([ours]) == "broken"


def test_a_difference_the_fuzzer_saw_is_judged_over_every_attempt(
    world: dict[str, Path],
) -> None:
    """A submission right on its first run and wrong after: by itself attempt 1 ends it
    ("passes on the submission too"); when the caller (the fuzzer) has already seen the
    input fail there, every attempt runs and the verdict is nondeterministic."""
    flag = world["tmp"] / "late.flag"
    late = write_tree(
        world["tmp"] / "late",
        {"tool.sh": f'if [ -e "{flag}" ]; then echo 0; else touch "{flag}"; echo 42; fi\n'},
    )
    world["late"] = late
    alone = judge(world, EQUALS_42, submission="late", nondeterminism="break")
    assert (alone.outcome, len(alone.runs)) == ("invalid", 2), alone.reason
    flag.unlink()
    seen = adjudicate(
        candidate(world, "c", EQUALS_42), world["original"], late,
        spec(world, nondeterminism="break"), stage_base=world["tmp"] / "stage",
        seen_failing=True,
    )  # fmt: skip
    assert seen.outcome == "nondeterministic" and counts_as_break(seen), seen.reason
    assert "failed attempts 2, 3 and passed 1" in seen.reason
    same = adjudicate(
        candidate(world, "d", EQUALS_42), world["original"], world["original"],
        spec(world, nondeterminism="break"), stage_base=world["tmp"] / "stage",
        seen_failing=True,
    )  # fmt: skip
    assert same.outcome == "invalid" and "all 3 attempts" in same.reason
    assert len(same.runs) == 6


def test_flaky_state_a_is_rejected_as_not_reproducible(world: dict[str, Path]) -> None:
    """State A itself passing once and failing after: the candidate is flaky, not a break,
    under either rule."""
    flag = world["tmp"] / "flaky-a.flag"
    flaky_a = write_tree(
        world["tmp"] / "flaky-a",
        {"tool.sh": f'if [ -e "{flag}" ]; then echo 0; else touch "{flag}"; echo 42; fi\n'},
    )
    verdict = adjudicate(
        candidate(world, "c", EQUALS_42), flaky_a, world["submission"],
        spec(world, nondeterminism="break"), stage_base=world["tmp"] / "stage",
    )  # fmt: skip
    assert verdict.outcome == "rejected", verdict.reason
    assert verdict.reason == "not reproducible: attempt 2 gave original exit 1, submission exit 1"
    assert not counts_as_break(verdict) and adversary_outcome([verdict]) == "survived"


def test_one_pair_decides_without_reruns(world: dict[str, Path]) -> None:
    """require_deterministic = false reaches the grader as reruns = 1 (the published grader
    runs no further pair then): the flaky submission is upheld on its first pair."""
    verdict = judge(world, EQUALS_42, submission="flaky", reruns=1, nondeterminism="break")
    assert verdict.outcome == "upheld" and len(verdict.runs) == 2


def test_hang_on_submission_is_a_real_asymmetry(world: dict[str, Path]) -> None:
    verdict = judge(world, EQUALS_42, submission="hanging", timeout_sec=1.0)
    assert verdict.outcome == "upheld"
    assert "(times out on the submission: a real asymmetry)" in verdict.reason
    assert all(run.timed_out for run in verdict.runs if run.role == "submission")


def test_hang_on_both_is_invalid(world: dict[str, Path]) -> None:
    verdict = judge(world, "sleep 60\n", timeout_sec=0.5)
    assert (verdict.outcome, verdict.reason) == ("invalid", "does not pass on State A (timed out)")


def test_fails_on_state_a_is_invalid(world: dict[str, Path]) -> None:
    verdict = judge(world, '[ "$(bash "$SRB_TARGET/tool.sh")" = 7 ]\n')
    assert (verdict.outcome, verdict.reason) == ("invalid", "does not pass on State A (exit 1)")


def test_fault_exit_code_is_invalid(world: dict[str, Path]) -> None:
    verdict = judge(world, "exit 70\n")
    assert verdict.outcome == "invalid"
    assert verdict.reason == (
        "fault exit code 70 on the original (attempt 1): the candidate reported its own fault"
    )
    on_b = judge(world, '[ "$(bash "$SRB_TARGET/tool.sh")" = 42 ] || exit 64\n')
    assert on_b.outcome == "invalid" and "fault exit code 64 on the submission" in on_b.reason
    custom = judge(
        world,
        '[ "$(bash "$SRB_TARGET/tool.sh")" = 42 ] || exit 64\n',
        fault_exit_codes=frozenset({3}),
    )
    assert custom.outcome == "upheld"


def test_reading_the_parent_command_line_is_rejected(world: dict[str, Path]) -> None:
    """The role is in the harness script's argv; a candidate that reads it works mechanically
    and is rejected by the scope scan."""
    verdict = judge(world, 'tr "\\0" " " < /proc/$PPID/cmdline | grep -q original\n')
    assert verdict.outcome == "rejected"
    assert verdict.reason.startswith(
        "out of scope: reads /proc to learn about its own process or parents (test.sh:1)"
    )
    assert {f.rule for f in verdict.findings} >= {"reads its parent process"}


def test_probing_a_file_only_one_tree_has_is_rejected(world: dict[str, Path]) -> None:
    verdict = judge(world, '[ -e "$SRB_TARGET/setup.py" ]\n')
    assert verdict.outcome == "rejected"
    assert verdict.reason == (
        "out of scope: names 'setup.py', which only the original has (test.sh:1)"
    )


def test_denied_command_is_rejected(world: dict[str, Path]) -> None:
    verdict = judge(
        world,
        "command -v curl >/dev/null || true\n" + EQUALS_42,
        deny_commands=("curl", "npm install"),
    )
    assert (verdict.outcome, verdict.reason) == (
        "rejected",
        "out of scope: uses denied command 'curl' (test.sh:1)",
    )


def test_views_are_identical_for_both_roles(world: dict[str, Path]) -> None:
    log = world["tmp"] / "seen.log"
    body = (
        f'{{ echo "$SRB_TARGET|$PWD|$HOME|$SRB_CANDIDATE|$#"; stat -c %Y "$SRB_TARGET/tool.sh"; '
        f'env | cut -d= -f1 | sort | tr "\\n" ","; echo; '
        f'env | grep -c -E "=(original|submission)$" || true; }} >> "{log}"\n' + EQUALS_42
    )
    verdict = judge(world, body)
    assert verdict.outcome == "rejected", "env dumps are out of scope"
    lines = log.read_text().splitlines()
    records = [tuple(lines[i : i + 4]) for i in range(0, len(lines), 4)]
    assert len(records) == 6
    assert len(set(records)) == 1, f"a candidate could tell the trees apart: {records}"
    paths, mtime, names, role_values = records[0]
    assert mtime == "946684800" and role_values == "0"
    assert paths.endswith("|0"), "the candidate itself gets no arguments"
    assert "SRB_ORIGINAL" not in names and "SRB_REPO" not in names


def test_harness_failures_are_errors(world: dict[str, Path]) -> None:
    cand = candidate(world, "c", "exit 0\n")
    broken = CandidateSpec(command=("/nonexistent/run-candidate",), reruns=1)
    verdict = adjudicate(cand, world["original"], world["submission"], broken)
    assert verdict.outcome == "error"
    assert verdict.reason.startswith("candidate command could not start: ")
    missing = adjudicate(world["tmp"] / "nope", world["original"], world["submission"], broken)
    assert missing.outcome == "error" and "candidate folder" in missing.reason


def test_scan_is_quiet_for_an_ordinary_candidate(world: dict[str, Path]) -> None:
    cand = write_tree(
        world["tmp"] / "plain",
        {
            "test.py": "import os, subprocess\nview = os.environ['SRB_TARGET']\n"
            "out = subprocess.run(['bash', view + '/tool.sh'], capture_output=True)\n"
            "assert out.stdout.strip() == b'42'\n",
            "notes.md": "Checks that the tool prints 42 like the original does.\n",
        },
    )
    assert (
        scan_candidate(
            cand,
            deny_commands=("node",),
            original=world["original"],
            submission=world["submission"],
        )
        == []
    )
    sneaky = write_tree(
        world["tmp"] / "sneaky",
        {
            "t.py": "import os\nrole = os.environ.get('SRB_ROLE')\nfor k in os.environ: pass\n"
            "os.stat(p).st_ino\n"
        },
    )
    rules = [f.rule for f in scan_candidate(sneaky)]
    assert rules == [
        "reads harness variable SRB_ROLE",
        "dumps the whole environment",
        "reads file identity or timestamps (inode, device, mtime, ctime)",
    ]


def test_adversary_outcomes() -> None:
    upheld = CandidateVerdict("upheld", "")
    invalid = CandidateVerdict("invalid", "")
    error = CandidateVerdict("error", "")
    assert adversary_outcome([invalid, upheld, error]) == "broken"
    assert adversary_outcome([invalid, invalid]) == "survived"
    assert adversary_outcome([]) == "survived"
    assert adversary_outcome([invalid, error]) == "error"
    assert adversary_outcome([], harness_error="driver crashed") == "error"


def test_parse_exit_codes() -> None:
    assert parse_exit_codes("64-78") == frozenset(range(64, 79))
    assert parse_exit_codes("1, 3-4") == frozenset({1, 3, 4})
    with pytest.raises(ValueError):
        parse_exit_codes("9-2")


def test_candidate_cli(world: dict[str, Path]) -> None:
    cand = candidate(world, "cli", EQUALS_42)
    result = world["tmp"] / "verdict.json"
    done = subprocess.run(
        grader_cmd(
            "candidate",
            "--candidate",
            str(cand),
            "--original",
            str(world["original"]),
            "--submission",
            str(world["submission"]),
            "--command-json",
            json.dumps(["bash", str(world["runner"])]),
            "--reruns",
            "2",
            "--result",
            str(result),
        ),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["outcome"] == "upheld" and len(printed["runs"]) == 4
    assert json.loads(result.read_text()) == printed
    bad = subprocess.run(
        grader_cmd(
            "candidate",
            "--candidate",
            str(cand),
            "--original",
            "x",
            "--submission",
            "y",
            "--command-json",
            "bash run.sh",
        ),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "bad candidate options" in bad.stderr
