"""The line a Stage II module record gets when the sandbox, not the submission, refused
something (a write, a capability)."""

from __future__ import annotations

from srb_tui.grader.suite.module_end import boundary_note, sandbox_hint


def test_a_refused_write_in_a_failing_check_is_named() -> None:
    checks = [{"id": "ok", "verdict": "pass", "summary": "Permission denied (not failing)"},
              {"id": "build-exits-0", "verdict": "fail",
               "summary": "sh build.sh exited 2\nmkdir: cannot create directory 'build': "
                          "Permission denied\nmake: *** Error 1"}]
    hint = sandbox_hint(checks, "")
    assert hint.startswith("the sandbox may have caused this: a write or access was refused")
    assert "in build-exits-0" in hint and "cannot create directory" in hint


def test_stderr_counts_and_a_plain_failure_says_nothing() -> None:
    assert "EROFS" in sandbox_hint([], "touch: /sys/x: Read-only file system\n")
    assert sandbox_hint([{"id": "x", "verdict": "fail", "summary": "got 3, want 4"}], "") == ""


def test_the_boundary_note_names_what_was_written() -> None:
    note = boundary_note(["_build", "_build/CMakeCache.txt"])
    assert "_build, _build/CMakeCache.txt" in note and "outside the submission sandbox" in note
    assert "in-process" in note  # what is left: code the module loads into itself
