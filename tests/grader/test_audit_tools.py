"""Reviewer tools: containment, each tool's answer, and the JSON-lines loop."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from srb_tui.grader.audit.tools import Toolbox, ToolLimits, collapse, handle_request

from .helpers import REPO, grader_cmd, write_tree


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    original = write_tree(
        tmp_path / "a",
        {
            "pkg/mod.py": "def main():\n    return 1\n",
            "same.txt": "identical\n",
            "README": "old\nline two\n",
        },
    )
    submission = write_tree(
        tmp_path / "b",
        {
            "lib/main.js": (
                "const x = 1;\nfunction main() {\n  return x;\n}\nmodule.exports = main;\n"
            ),
            "same.txt": "identical\n",
            "README": "new\nline two\n",
            "blob.bin": "",
        },
    )
    (submission / "blob.bin").write_bytes(b"\x00\x01binary")
    secret = write_tree(tmp_path / "outside", {"secret.txt": "top secret\n"})
    os.symlink(secret / "secret.txt", submission / "leak.txt")
    os.symlink(secret, submission / "leakdir")
    os.symlink("lib/main.js", submission / "inside-link.js")
    return original, submission, secret


def box(roots: tuple[Path, Path, Path], **kwargs: object) -> Toolbox:
    return Toolbox(roots[0], roots[1], **kwargs)  # type: ignore[arg-type]


def test_dotdot_and_symlink_escapes_are_refused(roots: tuple[Path, Path, Path]) -> None:
    tools = box(roots)
    for ref in (
        "submission:../outside/secret.txt",
        "submission:leak.txt",
        "submission:leakdir/secret.txt",
        "original:../b/README",
    ):
        reply = tools.call("fetch_source", {"path": ref})
        assert reply["ok"] is False and "resolves outside its root; refused" in reply["error"]
    listing = tools.call("list_dir", {"path": "submission:leakdir"})
    assert listing["ok"] is False and "outside its root" in listing["error"]
    hits = tools.call("search", {"pattern": "secret", "root": "both"})
    assert hits["ok"] and hits["result"]["matches"] == []
    assert tools.call("fetch_source", {"path": "submission:inside-link.js"})["ok"] is True
    evidence = tools.check_evidence("submission:leak.txt", 1, "top secret")
    assert evidence["grounded"] is False and "outside its root" in evidence["reason"]


def test_path_syntax_errors(roots: tuple[Path, Path, Path]) -> None:
    tools = box(roots)
    assert "path must be 'original:REL'" in tools.call("fetch_source", {"path": "README"})["error"]
    assert "unknown root 'repo'" in tools.call("fetch_source", {"path": "repo:README"})["error"]
    reply = tools.call("fetch_source", {"path": "workspace:README"})
    assert reply["ok"] and reply["result"]["path"] == "submission:README"


def test_list_dir(roots: tuple[Path, Path, Path]) -> None:
    result = box(roots).call("list_dir", {"path": "submission:", "depth": 2})["result"]
    kinds = {entry["path"]: entry["type"] for entry in result["entries"]}
    assert kinds["submission:lib"] == "dir"
    assert kinds["submission:lib/main.js"] == "file"
    assert kinds["submission:leak.txt"] == "link"
    assert "submission:leakdir/secret.txt" not in kinds, "links are not followed"
    shallow = box(roots).list_dir("submission:", depth=1)
    assert "submission:lib/main.js" not in {e["path"] for e in shallow["entries"]}
    capped = box(roots, limits=ToolLimits(list_max_entries=2)).list_dir("submission:", depth=3)
    assert len(capped["entries"]) == 2 and capped["truncated"] is True


def test_fetch_source_ranges_and_caps(roots: tuple[Path, Path, Path]) -> None:
    tools = box(roots)
    result = tools.fetch_source("submission:lib/main.js", start_line=2, end_line=3)
    assert result["text"] == "2: function main() {\n3:   return x;"
    assert (result["total_lines"], result["end_line"], result["truncated"]) == (5, 3, False)
    small = ToolLimits(fetch_max_bytes=30)
    capped = box(roots, limits=small).fetch_source("submission:lib/main.js")
    assert capped["truncated"] is True and capped["end_line"] < 5
    assert "binary file" in tools.call("fetch_source", {"path": "submission:blob.bin"})["error"]
    assert "is not a file" in tools.call("fetch_source", {"path": "submission:lib"})["error"]


def test_search_regex_glob_and_cap(roots: tuple[Path, Path, Path]) -> None:
    tools = box(roots)
    result = tools.search(r"\bmain\b", root="both", glob="*.js")
    assert [(m["path"], m["line"]) for m in result["matches"]] == [
        ("submission:inside-link.js", 2),
        ("submission:inside-link.js", 5),
        ("submission:lib/main.js", 2),
        ("submission:lib/main.js", 5),
    ]
    py = tools.search("def main", root="both", glob="pkg/*.py")
    assert [m["path"] for m in py["matches"]] == ["original:pkg/mod.py"]
    capped = tools.search("main", root="both", max_results=1)
    assert len(capped["matches"]) == 1 and capped["truncated"] is True
    bad = tools.call("search", {"pattern": "("})
    assert bad["ok"] is False and bad["error"].startswith("invalid regular expression")


def test_diff(roots: tuple[Path, Path, Path]) -> None:
    tools = box(roots)
    changed = tools.diff("README")
    assert changed["status"] == "changed"
    assert "-old" in changed["diff"] and "+new" in changed["diff"]
    assert "--- original:README" in changed["diff"]
    assert tools.diff("submission:same.txt")["status"] == "same"
    assert tools.diff("pkg/mod.py")["status"] == "only_original"
    assert tools.diff("lib/main.js")["status"] == "only_submission"
    folder = tools.diff("original:")
    assert folder["status"] == "folder" and "pkg" in folder["only_original"]
    assert "exists in neither root" in tools.call("diff", {"path": "nope"})["error"]


def test_run_allowlist_no_shell_and_timeout(roots: tuple[Path, Path, Path]) -> None:
    closed = box(roots).call("run", {"argv": ["ls"]})
    assert closed == {"ok": False, "error": "no commands are allowed in this review"}
    tools = box(roots, allow=["ls", "sleep", "cat"], limits=ToolLimits(run_timeout_sec=0.5))
    listing = tools.call("run", {"argv": ["ls"], "cwd": "lib"})
    assert listing["ok"] and listing["result"]["stdout"] == "main.js\n"
    assert listing["result"]["exit_code"] == 0
    refused = tools.call("run", {"argv": ["bash", "-c", "ls"]})
    assert refused["ok"] is False and "'bash' is not allowed" in refused["error"]
    path_form = tools.call("run", {"argv": ["/bin/ls"]})
    assert path_form["ok"] is False and "bare names only" in path_form["error"]
    no_shell = tools.call("run", {"argv": ["cat", "README; echo pwned"]})
    assert "pwned" not in no_shell["result"]["stdout"] and no_shell["result"]["exit_code"] != 0
    slow = tools.call("run", {"argv": ["sleep", "30"]})
    assert slow["result"]["timed_out"] is True
    escape = tools.call("run", {"argv": ["ls"], "cwd": "leakdir"})
    assert escape["ok"] is False and "outside its root" in escape["error"]


def test_check_evidence(roots: tuple[Path, Path, Path]) -> None:
    tools = box(roots)
    assert tools.check_evidence("submission:lib/main.js", 3, "RETURN   x;")["grounded"] is True
    near = tools.check_evidence("submission:lib/main.js", 5, "function main()")
    assert near["grounded"] is True, "±3 lines"
    far = tools.check_evidence("submission:lib/main.js", 5, "const x = 1;")
    assert far == {
        "grounded": False,
        "reason": "quote not found within 3 lines of submission:lib/main.js:5",
    }
    out = tools.check_evidence("submission:lib/main.js", 99, "x")
    assert out["reason"] == "line 99 is out of range (submission:lib/main.js has 5 lines)"
    assert tools.check_evidence("submission:nope.js", 1, "x")["reason"] == (
        "submission:nope.js does not exist or is not a file"
    )
    assert tools.check_evidence("submission:README", "2", "line two")["grounded"] is True
    assert tools.check_evidence("submission:README", True, "old")["grounded"] is False
    assert tools.check_evidence("submission:README", 1, "  ")["reason"] == (
        "the citation has no quote"
    )
    assert collapse("  A\n\tB  ") == "a b"


def test_dispatch_errors(roots: tuple[Path, Path, Path]) -> None:
    tools = box(roots)
    assert tools.call("rm", {})["error"].startswith("unknown tool 'rm'")
    assert tools.call("list_dir", [1])["error"] == "args must be an object"
    assert tools.call("list_dir", {"bogus": 1})["error"].startswith("bad arguments for list_dir")
    assert handle_request(tools, "not json")["error"].startswith("request is not valid JSON")
    assert handle_request(tools, '{"id": 7, "tool": "describe"}')["result"]["tools"] == [
        "list_dir",
        "fetch_source",
        "search",
        "diff",
    ]


def test_tools_loop_over_stdin_stdout(roots: tuple[Path, Path, Path]) -> None:
    requests = [
        {"id": 1, "tool": "fetch_source", "args": {"path": "submission:README"}},
        {"id": "two", "tool": "fetch_source", "args": {"path": "submission:leak.txt"}},
        {"id": 3, "tool": "run", "args": {"argv": ["true"]}},
    ]
    stdin = "\n".join(json.dumps(r) for r in requests) + "\n\n{broken\n"
    done = subprocess.run(
        grader_cmd(
            "tools", "--original", str(roots[0]), "--submission", str(roots[1]), "--allow", "true"
        ),
        cwd=REPO,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, "two", 3, None]
    assert replies[0]["ok"] and replies[0]["result"]["text"] == "1: new\n2: line two"
    assert replies[1]["ok"] is False and "outside its root" in replies[1]["error"]
    assert replies[2]["ok"] and replies[2]["result"]["exit_code"] == 0
    assert replies[3]["ok"] is False


def test_tools_cli_rejects_missing_root(tmp_path: Path) -> None:
    done = subprocess.run(
        grader_cmd("tools", "--original", str(tmp_path / "x"), "--submission", str(tmp_path)),
        cwd=REPO,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "is not a folder" in done.stderr
