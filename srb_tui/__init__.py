"""srb: a console for running and judging whole-repository stack migrations by coding agents."""

__version__ = "0.1.0"
