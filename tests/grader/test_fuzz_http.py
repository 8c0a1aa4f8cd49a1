"""The HTTP domain of the fuzz adversary (grader/fuzz_http.py), on the host, no Docker.

The two trees are demo02's State A and a copy of it whose integer query parsing uses
``int()`` (the same difference as the ``subtle`` submission, but on http.server, so the host's
python3 runs both). The round must find it, shrink it, and have its candidate upheld through
demo02's own run-candidate.sh; identical trees must survive; and no server may outlive the
round."""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path

from srb_tui.grader.candidates.records import CandidateSpec
from srb_tui.grader.fuzzing.http import HttpConfig, run_round
from srb_tui.grader.fuzzing.http_mutate import (
    Request,
    load_vocabulary,
    mutate_request,
    request_from_seed,
    shrink_request,
)

from ..conftest import DEMO02_TASK

VERIFICATION = DEMO02_TASK / "tests" / "verification"
SERVER = ["bin/shelf", "--host", "127.0.0.1", "--port", "{port}"]


def _trees(tmp_path: Path) -> tuple[Path, Path]:
    original = tmp_path / "original"
    shutil.copytree(DEMO02_TASK / "submissions" / "untouched", original)
    changed = tmp_path / "changed"
    shutil.copytree(original, changed)
    params = changed / "shelf" / "params.py"
    text = params.read_text()
    old = ('    if not INTEGER.fullmatch(text):\n'
           '        raise BadInput(400, "bad_query", f"{name} must be an integer", name)\n'
           '    value = int(text)\n')
    assert old in text
    new = ('    try:\n        value = int(text)\n    except ValueError:\n'
           '        raise BadInput(400, "bad_query", f"{name} must be an integer", name)\n')
    params.write_text(text.replace(old, new))
    return original, changed


def _config(tmp_path: Path, original: Path, submission: Path, budget: float) -> HttpConfig:
    spec = CandidateSpec(command=("bash", str(VERIFICATION / "run-candidate.sh")), reruns=3,
                         timeout_sec=60.0)
    return HttpConfig(
        adversary="h02-test", original=original, submission=submission,
        seeds=VERIFICATION / "data" / "requests.json", server=SERVER,
        headers=["content-type", "content-length", "location", "allow"], seed=2,
        budget_sec=budget, request_timeout_sec=10.0, start_timeout_sec=15.0, spec=spec,
        work=tmp_path / "work", stage_base=tmp_path / "stage",
    )


def _servers_of(tree: Path) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if b"bin/shelf" in cmdline and str(tree.parent).encode() in cmdline:
                found.append(int(name))
    return found


def test_target_encodes_what_a_request_line_cannot_carry() -> None:
    request = Request("GET", "/authors/夏目 x#", (("q", "a b+é"), ("limit", "3")),
                      (("Accept", "text/plain\r\nX: y"), ("Content-Length", "9")))
    assert request.target() == "/authors/%E5%A4%8F%E7%9B%AE%20x%23?q=a%20b+%C3%A9&limit=3"
    assert request.header_list() == [("Accept", "text/plainX: y")]  # framing header dropped


def test_mutations_are_fixed_by_the_seed() -> None:
    seed = request_from_seed({"method": "GET", "path": "/books", "query": "limit=3"})
    vocab = load_vocabulary({"methods": ["GET", "POST"], "query_names": ["limit"]})

    def run(n: int) -> list[str]:
        rng = random.Random(n)
        return [mutate_request(seed, rng, vocab, [b"{}"]).target() for _ in range(50)]

    assert run(7) == run(7) and run(7) != run(8)


def test_shrinking_keeps_only_what_makes_the_difference() -> None:
    noisy = Request("POST", "/books", (("tag", "sf"), ("limit", "+3"), ("q", "the")),
                    (("Accept", "text/plain"),), b'{"title": "x"}')
    small, tests = shrink_request(noisy, lambda r: ("limit", "+3") in r.query,
                                  time.monotonic() + 5)
    assert small.query == (("limit", "+3"),) and small.headers == () and small.body is None
    assert tests > 0


def test_round_finds_shrinks_and_upholds_the_integer_difference(tmp_path: Path) -> None:
    original, changed = _trees(tmp_path)
    doc = run_round(_config(tmp_path, original, changed, budget=20.0))
    assert doc["outcome"] == "broken", doc["reason"]
    upheld = [c for c in doc["candidates"] if c["verdict"]["outcome"] == "upheld"]
    assert upheld
    cx = upheld[0]
    assert cx["observed"]["original"]["status"] == 400
    assert cx["observed"]["submission"]["status"] != 400
    assert "SERVICE_URL" in cx["files"]["candidate.sh"]
    runs = cx["verdict"]["runs"]
    assert [r["exit_code"] for r in runs if r["role"] == "original"] == [0, 0, 0]
    assert all(r["exit_code"] == 1 for r in runs if r["role"] == "submission")
    assert _servers_of(original) == []  # every server of the round is gone


def test_identical_trees_survive(tmp_path: Path) -> None:
    original, _ = _trees(tmp_path)
    twin = tmp_path / "twin"
    shutil.copytree(original, twin)
    doc = run_round(_config(tmp_path, original, twin, budget=3.0))
    assert doc["outcome"] == "survived", doc["reason"]
    assert doc["iterations"] >= 18 and doc["differences"] == 0  # at least every seed
    assert _servers_of(original) == []


def test_a_state_a_that_does_not_serve_is_a_harness_error(tmp_path: Path) -> None:
    original, changed = _trees(tmp_path)
    (original / "bin" / "shelf").write_text("#!/bin/sh\nexit 3\n")
    doc = run_round(_config(tmp_path, original, changed, budget=3.0))
    assert doc["outcome"] == "error" and "State A's server does not start" in doc["reason"]
