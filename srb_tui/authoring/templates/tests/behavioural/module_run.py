"""Behavioural module @@MODULE@@: run its recorded cases against the submission."""

import os
import sys
from pathlib import Path

_SUITE = Path(os.environ.get("SRB_SUITE_DIR") or Path(__file__).resolve().parents[2])
sys.path.insert(0, str(_SUITE / "lib"))

from casekit import run_module  # noqa: E402

sys.exit(run_module("@@MODULE@@"))
