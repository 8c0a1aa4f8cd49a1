"""The opening every fixture run-candidate.sh of the contract tests shares.

It reads the published candidate contract the way both published scripts do (lang03,
build03: ``TARGET="${SRB_TARGET:?...}"`` first): the target tree, the role argument, the
target token, the candidate file and SRB_WORK, each required; an unknown role is a fault
(exit 64); ``$STATE`` is the per-token folder under SRB_WORK. The tests append what they
check after it.
"""

from __future__ import annotations

CONTRACT_PREAMBLE = r"""#!/usr/bin/env bash
set -uo pipefail
TARGET="${SRB_TARGET:?SRB_TARGET is not set}"
ROLE="${1:?the target role was not passed as an argument}"
TOKEN="${SRB_TARGET_TOKEN:?SRB_TARGET_TOKEN is not set}"
CANDIDATE="${SRB_CANDIDATE:?SRB_CANDIDATE is not set}"
WORK="${SRB_WORK:?SRB_WORK is not set}"
case "$ROLE" in original|submission) ;; *) exit 64 ;; esac
STATE="$WORK/$TOKEN"
"""
