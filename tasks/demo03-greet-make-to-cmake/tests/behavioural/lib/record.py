"""Record demo03's answers from State A: build it, then write data/expected/*.json.

    python3 record.py STATE_A_TREE

Needs cc, make, readelf and nm on the host (the behavioural image has them).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kit import DATA, cases, layout_facts, run_case


def main(tree: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "repo"
        shutil.copytree(tree, work)
        root = Path(tmp) / "prefix"
        subprocess.run(["sh", "build.sh", str(root)], cwd=work, check=True,
                       capture_output=True)
        answers = {case["id"]: run_case(root / "bin" / "greet", case) for case in cases()}
        out = DATA / "expected"
        (out / "layout.json").write_text(json.dumps(layout_facts(root), indent=1) + "\n")
        (out / "run.json").write_text(json.dumps(answers, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
