"""Module 'build': build the submission as published modules do (``sh build.sh PREFIX`` with
the working folder $SRB_REPO, started by the module itself) and check what it installed."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.environ["SRB_SUITE_DIR"], "lib"))
from kit import check, prefix, write_result  # noqa: E402

root = prefix()
shutil.rmtree(root, ignore_errors=True)
done = subprocess.run(["sh", "build.sh", str(root)], cwd=os.environ["SRB_REPO"],
                      capture_output=True, timeout=240)
tail = (done.stdout + done.stderr).decode("utf-8", "replace")[-1500:]
program = root / "bin" / "greet"
sys.exit(write_result([
    check("build-exits-0", done.returncode == 0, f"sh build.sh exited {done.returncode}\n{tail}"),
    check("greet-installed", program.is_file() and os.access(program, os.X_OK),
          f"{program} {'is' if program.is_file() else 'is not'} there"),
]))
