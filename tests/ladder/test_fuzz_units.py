"""The fuzz adversary's pieces on the host: mutation, delta debugging, candidate scripts."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from srb_tui.grader.fuzzing.argv import (
    Observation,
    candidate_script,
    ddmin,
    mutate,
    mutate_argv,
    printf_literal,
    shell_word,
)


def test_mutation_is_deterministic_per_seed() -> None:
    corpus = [b"a,b,c\n1,2,3\n", b"x;y\n"]
    first = [mutate(corpus[0], random.Random(7), corpus) for _ in range(1)]
    rng_a, rng_b = random.Random(7), random.Random(7)
    seq_a = [mutate(corpus[0], rng_a, corpus) for _ in range(50)]
    seq_b = [mutate(corpus[0], rng_b, corpus) for _ in range(50)]
    assert seq_a == seq_b
    assert seq_a[0] == first[0]
    assert len(set(seq_a)) > 10  # it does mutate
    other = [mutate(corpus[0], random.Random(8), corpus) for _ in range(50)]
    assert other != seq_a
    argvs = {tuple(mutate_argv(["-f", "json"], random.Random(s))) for s in range(30)}
    assert len(argvs) > 3


def test_ddmin_finds_a_minimal_input() -> None:
    data = b"hello, \x01 world, this is long"

    def failing(candidate: bytes) -> bool:
        return b"\x01" in candidate

    shrunk, tests = ddmin(data, failing, deadline=float("inf"))
    assert shrunk == b"\x01"
    assert 0 < tests < 200


def test_ddmin_keeps_a_two_part_cause() -> None:
    def failing(candidate: bytes) -> bool:
        return b"A" in candidate and b"Z" in candidate

    shrunk, _ = ddmin(b"..A.......Z..", failing, deadline=float("inf"))
    assert sorted(shrunk) == sorted(b"AZ")


def test_printf_literal_round_trips_every_byte(tmp_path: Path) -> None:
    data = bytes(range(256)) + b"-%s\\'\"\n--x"
    script = tmp_path / "p.sh"
    script.write_text(f"printf -- '{printf_literal(data)}'\n")
    out = subprocess.run(["bash", str(script)], capture_output=True, check=True).stdout
    assert out == data


def test_shell_word_quotes_anything(tmp_path: Path) -> None:
    words = ["-d", ";", "a b", "$HOME", "it's", "\t", "漢", "--x=1"]
    script = tmp_path / "w.sh"
    script.write_text("printf '%s\\0' " + " ".join(shell_word(w) for w in words) + "\n")
    out = subprocess.run(["bash", str(script)], capture_output=True, check=True).stdout
    assert out.split(b"\0")[:-1] == [w.encode() for w in words]


def test_candidate_script_demands_state_a_behaviour(tmp_path: Path) -> None:
    tree = tmp_path / "tree" / "bin"
    tree.mkdir(parents=True)
    tool = tree / "tool"
    tool.write_text("#!/bin/bash\ntr 'a' 'b'\n")
    tool.chmod(0o755)
    expected = Observation(0, b"b\x01-\n", b"", False, 0.01)
    script = candidate_script(
        adversary="t",
        seed=1,
        entry="bin/tool",
        argv=["-x"],
        data=b"a\x01-\n",
        original_len=9,
        expected=expected,
    )
    path = tmp_path / "candidate.sh"
    path.write_text(script)
    env = {"PATH": "/usr/bin:/bin", "SRB_TARGET": str(tmp_path / "tree"), "TMPDIR": str(tmp_path)}
    ok = subprocess.run(["bash", str(path)], env=env, capture_output=True)
    assert ok.returncode == 0, ok.stderr
    tool.write_text("#!/bin/bash\ntr 'a' 'c'\n")
    bad = subprocess.run(["bash", str(path)], env=env, capture_output=True)
    assert bad.returncode == 1
    assert b"stdout differs" in bad.stderr


def test_argv_mutations_use_the_tasks_own_vocabulary(tmp_path: Path) -> None:
    from srb_tui.grader.fuzzing.argv import GENERIC_TOKENS, argv_vocabulary

    declared = tmp_path / "argv.json"
    declared.write_text('{"argv": [["--mode", "x"]], "tokens": ["--frob", "7"]}')
    assert argv_vocabulary(declared, [["--mode", "x"]])[:2] == ["--frob", "7"]
    plain = tmp_path / "plain.json"
    plain.write_text('{"argv": [["--mode", "x"]]}')
    words = argv_vocabulary(plain, [["--mode", "x"]])
    assert words[:2] == ["--mode", "x"] and "markdown" not in words
    assert set(GENERIC_TOKENS) <= set(words)
    inserted = {
        word
        for seed in range(60)
        for word in mutate_argv([], random.Random(seed), ["--frob"])
    }
    assert inserted == {"--frob"}
