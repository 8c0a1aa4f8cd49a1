"""The published stage contracts, exercised by srb's own small fixture tasks (issue 11)."""
