"""shelf: a small JSON catalogue service for a lending library."""

__version__ = "2.3.0"
