"""``python3 -m <grader package> ...``: dispatch to the grader's subcommands."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
