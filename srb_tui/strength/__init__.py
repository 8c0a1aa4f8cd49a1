"""Test-strength campaign: mutants of a task's State A tree (issue 36)."""
