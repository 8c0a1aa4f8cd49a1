"""Fault tests (issue 13): the world failing around a run, against the real engine.

- ``test_two_stores``: ``srb gc``/``resume``/``runs cancel`` in one store never touch
  another store's containers (nor a copied store's).
- ``test_sigkill``: srb SIGKILLed at a lifecycle boundary (``SRB_FAULT_KILL_AT``, see
  srb_tui/faultpoint.py), then ``srb resume``.
- ``test_store_faults``: the store truncated, newer, locked, read-only; a second srb on a
  run that another one holds (``SRB_FAULT_STOP_AT`` freezes the first).
- ``test_engine_restart``: the dockerd serving ``DOCKER_HOST`` stopped and restarted
  (tests/faults/engine.py finds it by its socket and restarts it with its own command line).
- ``test_disk_full``: ``state/`` on a small tmpfs that fills.
- ``test_safe_reads``: hostile trees read on the host (links, FIFOs, huge files, names).

The default suite runs one representative case per fault; ``SRB_FULL_FAULTS=1`` runs every
boundary. Each injection appends a line to the ledger that ``bench/faults_report.py``
prints as the faults table.
"""
