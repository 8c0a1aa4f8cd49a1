"""Campaigns: a matrix of (task, configuration, repeat) cells run unattended.

``spec`` reads campaign files (TOML, the schema reader's problems), ``plan`` turns one into
cells and each task's declared resources, ``scheduler`` runs them (resources, retries, cost
ceiling, re-attach after a crash), ``calls`` is the only place that talks to the run service.
"""
