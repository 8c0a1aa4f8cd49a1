#!/bin/bash
# Run one Stage III candidate against one tree (the published candidate contract).
#   bash run-candidate.sh ROLE
# The program under test is the tree's greet after `sh build.sh stage`: stage/bin/greet
# (the fixed path fuzz_entry names); the candidate finds it in $GREET.
set -u
TARGET="${SRB_TARGET:?SRB_TARGET is not set}"
ROLE="${1:?the target role was not passed as an argument}"
CANDIDATE="${SRB_CANDIDATE:?SRB_CANDIDATE is not set}"
case "$ROLE" in
    original|submission) ;;
    *) echo "run-candidate.sh: unknown target role" >&2; exit 64 ;;
esac
unset SRB_TARGET_ROLE SRB_TARGET_NAME SRB_ORIGINAL
[ -f "$CANDIDATE" ] || { echo "run-candidate.sh: no candidate file at $CANDIDATE" >&2; exit 66; }
export GREET="$TARGET/stage/bin/greet"
export LC_ALL=C.UTF-8 LANG=C.UTF-8 TZ=UTC
exec bash "$CANDIDATE"
