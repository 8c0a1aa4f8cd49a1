"""`python -m srb_tui` runs the same entry point as the `srb` console script."""

from srb_tui.cli import main

raise SystemExit(main())
