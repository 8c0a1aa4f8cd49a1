#!/bin/bash
# Run one Stage III candidate against one tree (the published candidate contract).
#   bash run-candidate.sh ROLE
# The grader runs this with the working folder set to a fresh copy of the tree under
# test and SRB_TARGET (that tree, the same path for both roles), SRB_CANDIDATE (the
# candidate's file, a bash script) and SRB_WORK in the environment. The role is not
# passed on: the candidate finds the program under test in $PROGRAM and exits 0 for
# pass, non-zero for fail.
set -u
TARGET="${SRB_TARGET:?SRB_TARGET is not set}"
ROLE="${1:?the target role was not passed as an argument}"
CANDIDATE="${SRB_CANDIDATE:?SRB_CANDIDATE is not set}"
case "$ROLE" in
    original|submission) ;;
    *) echo "run-candidate.sh: unknown target role" >&2; exit 64 ;;
esac
unset SRB_TARGET_ROLE SRB_TARGET_NAME SRB_ORIGINAL
if [ ! -f "$CANDIDATE" ]; then
    echo "run-candidate.sh: no candidate file at $CANDIDATE" >&2
    exit 66
fi
export PROGRAM="$TARGET/@@ENTRY@@"
export LC_ALL=C.UTF-8 LANG=C.UTF-8 TZ=UTC
exec bash "$CANDIDATE"
