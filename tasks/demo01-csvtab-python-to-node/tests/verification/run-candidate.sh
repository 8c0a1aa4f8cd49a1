#!/bin/bash
# Run one Stage III candidate against the staged tree.
#   bash run-candidate.sh ROLE
# The candidate is candidate.sh in the candidate's folder ($SRB_CANDIDATE, where
# the grader stages it; without it, the current directory), which is also its
# working directory.  It finds the program under test in $CSVTAB and exits 0
# for pass, non-zero for fail.  SRB_VIEW is the staged tree's view path, the
# same for both roles.
set -u
if [ -z "${SRB_VIEW:-}" ]; then
    echo "run-candidate.sh: SRB_VIEW is not set" >&2
    exit 70
fi
if [ -n "${SRB_CANDIDATE:-}" ]; then
    cd "$SRB_CANDIDATE" || exit 71
fi
if [ ! -f ./candidate.sh ]; then
    echo "run-candidate.sh: no candidate.sh in $(pwd)" >&2
    exit 66
fi
export CSVTAB="$SRB_VIEW/bin/csvtab"
export LC_ALL=C.UTF-8 LANG=C.UTF-8 TZ=UTC
exec bash ./candidate.sh "$@"
