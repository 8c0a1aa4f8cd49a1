"""Headless subcommands of ``srb``, one module per command group."""
