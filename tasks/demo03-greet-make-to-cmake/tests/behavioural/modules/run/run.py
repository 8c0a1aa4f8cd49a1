"""Module 'run': the installed greet on recorded command lines (stdout and exit status)."""

import os
import sys

sys.path.insert(0, os.path.join(os.environ["SRB_SUITE_DIR"], "lib"))
from kit import cases, check, expected, prefix, run_case, write_result  # noqa: E402

program = prefix() / "bin" / "greet"
want = expected("run")
checks = []
for case in cases():
    try:
        got = run_case(program, case)
    except OSError as exc:
        got = {"stdout": "", "code": None, "error": str(exc)}
    checks.append(check(case["id"], got == want[case["id"]], f"got {got!r}"))
sys.exit(write_result(checks))
