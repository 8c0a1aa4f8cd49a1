"""Data prepared for screens and commands: diffs, tables, history, safe reads."""
