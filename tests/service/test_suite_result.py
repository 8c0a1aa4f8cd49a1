"""Stage II's result from the grader's own lines (issue 38 item 2): the host puts the
``@srb-checks`` lines' checks back into the ``@srb-result`` document and gets exactly the
file the grader wrote, or nothing (then it fetches the file) when the lines do not agree
with themselves."""

from __future__ import annotations

import json
from pathlib import Path

from srb_tui.service.grading.stages.suite_result import StreamedResult
from tests.grader.helpers import make_suite, read_json, run_grader, write_tree

TWO = ('echo \'{"checks": [{"id": "a", "verdict": "pass"}, {"id": "b", "verdict": "fail", '
       '"summary": "caf\\u00e9 \\ud800", "detail": "two\\nlines"}]}\' > "$SRB_RESULT"\n')


def _lines(tmp_path: Path) -> tuple[list[bytes], dict[str, object]]:
    suite = make_suite(tmp_path / "suite", 'schema = "swerefactor.behavioural-suite/1"\n'
                       'task = "t"', {"first": ("weight = 1", "run.sh", TWO),
                                      "broken": ("weight = 1", "run.sh", "exit 3\n"),
                                      "last": ("weight = 2", "run.sh", TWO)})
    result = tmp_path / "r.json"
    done = run_grader("suite", "--suite", str(suite), "--repo",
                      str(write_tree(tmp_path / "repo", {"f": "x"})), "--result", str(result),
                      "--work", str(tmp_path / "w"))
    assert done.returncode == 0, done.stderr
    return [line.encode("utf-8", "surrogateescape") for line in done.stdout.splitlines()], \
        read_json(result)


def test_the_lines_carry_exactly_the_file(tmp_path: Path) -> None:
    lines, written = _lines(tmp_path)
    streamed = StreamedResult()
    for line in lines:
        streamed.on_line(line)
    doc = streamed.document()
    assert doc is not None
    assert doc == written  # every key, every check in order (non-ASCII, lone surrogate)
    assert len(doc["checks"]) == 4 and doc["status"] == "ok"  # type: ignore[arg-type]


def test_lines_that_do_not_agree_give_no_document(tmp_path: Path) -> None:
    lines, _ = _lines(tmp_path)
    checks = [line for line in lines if line.startswith(b"@srb-checks ")]
    result = [line for line in lines if line.startswith(b"@srb-result ")]
    assert len(result) == 1 and len(checks) == 3
    cases = {
        "no result line (a grader that did not finish)": [*checks],
        "a module's checks twice": [*checks, checks[0], *result],
        "a checks line missing": [*checks[1:], *result],
        "two result lines": [*checks, *result, *result],
        "a checks line cut short": [*checks[:-1], checks[-1][:-5], *result],
    }
    for what, given in cases.items():
        streamed = StreamedResult()
        for line in given:
            streamed.on_line(line)
        assert streamed.document() is None, what


def test_a_result_line_with_checks_of_its_own_is_not_believed() -> None:
    streamed = StreamedResult()
    streamed.on_line(b'@srb-checks {"module": "m", "checks": [{"id": "a"}]}')
    forged = {"document": {"units": [], "checks": [{"id": "z"}]}, "checks_streamed": 1}
    streamed.on_line(b"@srb-result " + json.dumps(forged).encode())
    assert streamed.document() is None
