"""Allow ``python -m csvtab``."""

import sys

from csvtab.cli import main

sys.exit(main(sys.argv[1:]))
