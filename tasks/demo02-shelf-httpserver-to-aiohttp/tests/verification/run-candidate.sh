#!/bin/bash
# Run one Stage III candidate against a freshly started server of the staged tree.
#   bash run-candidate.sh [...] ROLE
# The published candidate contract: SRB_TARGET is the tree, SRB_CANDIDATE the candidate
# file, cwd the tree, SRB_WORK shared scratch, the role (original|submission) the last
# argument -- this script's to know, never the candidate's.
# The tree's bin/shelf is started on a free 127.0.0.1 port in a session of its own; the
# candidate gets its address in SERVICE_URL and exits 0 for pass, non-zero for fail. The
# server's whole session is killed when the candidate ends. A State A server that does not
# come up is a harness fault (exit 70); a submission whose server does not come up fails.
set -u
role="${!#}"
TARGET="${SRB_TARGET:?SRB_TARGET is not set}"
candidate="${SRB_CANDIDATE:?SRB_CANDIDATE is not set}"
rundir="$(dirname "$candidate")"
if [ ! -f "$candidate" ]; then
    echo "run-candidate.sh: no candidate at $candidate" >&2
    exit 66
fi
scratch="${SRB_WORK:-${TMPDIR:-/tmp}}"
mkdir -p "$scratch" || exit 73
log="$(mktemp "$scratch/shelf-server.XXXXXX")" || exit 73
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')" || exit 71
export LC_ALL=C.UTF-8 LANG=C.UTF-8 TZ=UTC

setsid "$TARGET/bin/shelf" --host 127.0.0.1 --port "$port" > "$log" 2>&1 < /dev/null &
server=$!
stop_server() {
    kill -TERM -- "-$server" 2>/dev/null
    for _ in $(seq 50); do
        kill -0 -- "-$server" 2>/dev/null || break
        sleep 0.02
    done
    kill -KILL -- "-$server" 2>/dev/null
    wait "$server" 2>/dev/null
    rm -f "$log"
}
trap stop_server EXIT

ready=""
deadline=$((SECONDS + 15))
while [ "$SECONDS" -lt "$deadline" ]; do
    if ! kill -0 "$server" 2>/dev/null; then
        break
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        ready=yes
        break
    fi
    sleep 0.02
done
if [ -z "$ready" ]; then
    echo "run-candidate.sh: the $role server did not start:" >&2
    tail -c 600 "$log" >&2
    if [ "$role" = "submission" ]; then
        exit 1
    fi
    exit 70
fi

export SERVICE_URL="http://127.0.0.1:$port"
cd "$rundir" || exit 71
bash "$candidate"
status=$?
exit "$status"
