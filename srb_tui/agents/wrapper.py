"""The round wrapper: the script each round's ``exec`` runs inside the agent container.

``round.sh N BUDGET ARGV…`` runs the client once with ``prompt-NNN.txt`` on stdin, under
``timeout BUDGET``, and leaves everything a resumed srb needs in the rounds directory:
``started-NNN``, the client's stdout as written (``round-NNN.jsonl``) and stderr
(``round-NNN.stderr``), tree fingerprints before and after, and ``rc-NNN`` (written last,
atomically). The client's stdout is also appended to the container's main stdout
(``/proc/1/fd/1``), between ``@@srb round N start`` and ``@@srb round N exit RC`` marker
lines, so srb's log follower — which resumes after the last stored line — carries it
into the store exactly once, whether or not srb was alive while it was written.
"""

from __future__ import annotations

from srb_tui.agents.adapters import REPO, ROUNDS_DIR

MARK = "@@srb round"

ROUND_SH = f"""#!/bin/bash
# srb round wrapper (see srb_tui/agents/wrapper.py)
set -u
n="$1"; budget="$2"; shift 2
nn=$(printf '%03d' "$n")
dir={ROUNDS_DIR}
fingerprint() {{
  find {REPO} -path {REPO}/node_modules -prune -o -path {REPO}/.git -prune -o \\
       -type f -printf '%s %T@ %p\\n' 2>/dev/null | sort | cksum | cut -d' ' -f1
}}
cd {REPO} || exit 1
fingerprint > "$dir/tree-before-$nn"
: > "$dir/started-$nn"
echo "{MARK} $n start" > /proc/1/fd/1
timeout -k 10 "$budget" "$@" < "$dir/prompt-$nn.txt" \\
  2> >(tee -a "$dir/round-$nn.stderr" > /proc/1/fd/2) \\
  | tee -a "$dir/round-$nn.jsonl" > /proc/1/fd/1
rc=${{PIPESTATUS[0]}}
fingerprint > "$dir/tree-after-$nn"
echo "$rc" > "$dir/rc-$nn.tmp" && mv -f "$dir/rc-$nn.tmp" "$dir/rc-$nn"
echo "{MARK} $n exit $rc" > /proc/1/fd/1
"""


def parse_marker(text: str) -> tuple[int, str, int | None] | None:
    """``@@srb round 3 exit 0`` -> (3, "exit", 0); ``… 3 start`` -> (3, "start", None)."""
    if not text.startswith(MARK + " "):
        return None
    parts = text.split()
    try:
        number = int(parts[2])
        what = parts[3]
        rc = int(parts[4]) if what == "exit" and len(parts) > 4 else None
    except (IndexError, ValueError):
        return None
    return number, what, rc
