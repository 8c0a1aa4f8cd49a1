"""The manifests the host and the grader both read, each by one set of rules.

Standard library only and imported relatively (the grader folder is copied into stage
containers as ``srb_grader``, this package with it): :mod:`.table` is the
problem-collecting reader, :mod:`.suite` reads ``suite.toml``/``scan.toml`` and
:mod:`.probe` reads ``probe.toml``. The host's task loader layers file names, line numbers
and its cross-checks on top through a reporter; the grader collects plain sentences.
"""
