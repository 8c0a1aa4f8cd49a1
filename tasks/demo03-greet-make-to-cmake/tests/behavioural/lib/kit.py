"""Shared helpers of demo03's modules: the installed tree's facts and the result file.

The modules follow the published module contract: ``build`` runs ``sh build.sh PREFIX``
itself with the working folder ``$SRB_REPO`` (no launcher), installing into
``$SRB_SUITE_WORK/prefix``; ``layout`` and ``run`` read and run what it installed. The same
functions compute the recorded answers from State A (``record.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
CASE_TIMEOUT_SEC = 10


def prefix() -> Path:
    return Path(os.environ["SRB_SUITE_WORK"]) / "prefix"


def installed_files(root: Path) -> list[list[str]]:
    """Every entry under ``root``: [relative path, kind] with kind file, link->TARGET, dir."""
    found: list[list[str]] = []
    for current, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = Path(current) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found.append([rel, "link->" + os.readlink(path)])
            elif path.is_dir():
                found.append([rel, "dir"])
            else:
                found.append([rel, "file"])
    return sorted(found)


def soname(library: Path) -> str:
    out = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "(SONAME)" in line:
            return line.split("[", 1)[1].rstrip("]")
    return ""


def exported(library: Path) -> list[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)],
                         capture_output=True, text=True).stdout
    return sorted(parts[2] for parts in (line.split() for line in out.splitlines())
                  if len(parts) == 3 and parts[1] == "T")


def layout_facts(root: Path) -> dict[str, Any]:
    header = root / "include" / "greet.h"
    library = root / "lib" / "libgreet.so.1"
    return {
        "files": installed_files(root),
        "header_sha256": hashlib.sha256(header.read_bytes()).hexdigest() if header.is_file()
        else "",
        "soname": soname(library) if library.is_file() else "",
        "symbols": exported(library) if library.is_file() else [],
    }


def cases() -> list[dict[str, Any]]:
    return json.loads((DATA / "cases" / "run.json").read_text(encoding="utf-8"))


def run_case(program: Path, case: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([str(program), *case["argv"]], input=case.get("stdin", "").encode(),
                          capture_output=True, timeout=CASE_TIMEOUT_SEC)
    return {"stdout": done.stdout.decode("utf-8", "replace"), "code": done.returncode}


def expected(name: str) -> Any:
    return json.loads((DATA / "expected" / f"{name}.json").read_text(encoding="utf-8"))


def check(check_id: str, ok: bool, summary: str) -> dict[str, Any]:
    return {"id": check_id, "verdict": "pass" if ok else "fail", "weight": 1.0,
            "summary": summary}


def write_result(checks: list[dict[str, Any]]) -> int:
    Path(os.environ["SRB_RESULT"]).write_text(json.dumps({"checks": checks}), encoding="utf-8")
    return 0
