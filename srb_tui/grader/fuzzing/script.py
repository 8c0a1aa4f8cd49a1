"""The ``candidate.sh`` each fuzz domain writes for a difference it found.

The CLI domain's (:mod:`.argv`, :func:`candidate_script`) feeds the shrunk input on stdin to
the tree's entry (``$SRB_TARGET``) and demands State A's exit status and stdout byte for byte.
The input and the expected output are written as bash ``printf`` formats (octal escapes for
anything unprintable), the command line as bash words that expand to exactly the argv the
fuzzer used. The HTTP domain's (:mod:`.http`, :func:`http_candidate_script`) sends the
shrunk request to the service the task's run-candidate.sh started and demands State A's
status, compared headers and body.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .http_mutate import Request
    from .observed import Observation, Response

CHUNK = 48


def printf_literal(data: bytes) -> str:
    """``data`` as the body of a single-quoted bash printf format (octal for the rest)."""
    out: list[str] = []
    for byte in data:
        ch = chr(byte)
        if ch == "%":
            out.append("%%")
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "'" or byte < 0x20 or byte > 0x7E:
            out.append(f"\\{byte:03o}")
        else:
            out.append(ch)
    return "".join(out)


def _printf_block(data: bytes, target: str) -> list[str]:
    if not data:
        return [f': > "{target}"']
    lines = ["{"]
    for start in range(0, len(data), CHUNK):
        lines.append(f"  printf -- '{printf_literal(data[start : start + CHUNK])}'")
    lines.append(f'}} > "{target}"')
    return lines


def shell_word(word: str) -> str:
    """A bash word that expands to exactly ``word``."""
    if word and all(c.isalnum() or c in "-_=.,/:+@" for c in word):
        return word
    return (
        "$'"
        + "".join(
            c
            if c.isalnum() or c in " -_=.,/:+@"
            else f"\\x{ord(c):02x}"
            if ord(c) < 0x80
            else "".join(f"\\x{b:02x}" for b in c.encode("utf-8"))
            for c in word
        )
        + "'"
    )


def candidate_script(
    *,
    adversary: str,
    seed: int,
    entry: str,
    argv: Sequence[str],
    data: bytes,
    original_len: int,
    expected: Observation,
    build: str | None = None,
) -> str:
    """candidate.sh: feed ``data`` to the entry and demand State A's exit status and stdout;
    with ``build`` (the probe's fuzz_build script) the tree is first built the way the fuzzer
    built it, ``sh SCRIPT TREE`` in the tree, and a build that fails is a failure (exit 1)."""
    words = " ".join(shell_word(word) for word in argv)
    command = f'"$SRB_TARGET/{entry}"' + (f" {words}" if words else "")
    header = [
        "#!/bin/bash",
        f"# srb fuzz adversary {adversary} (seed {seed}): a {len(data)}-byte input on stdin,",
        f"# shrunk by delta debugging from {original_len} bytes. State A exits"
        f" {expected.exit_code} and prints {len(expected.stdout)} bytes;",
        "# anything else is a behavioural difference.",
        "# The program runs in the tree (the working folder); what it is compared with stays",
        "# in a private folder, and the comparison runs there, out of the program's reach.",
        "set -u",
        'scratch="$(mktemp -d "${TMPDIR:-/tmp}/fuzz-candidate.XXXXXX")" || exit 70',
    ]
    built = [] if build is None else [
        f'(cd "$SRB_TARGET" && sh {shell_word(build)} "$SRB_TARGET") > "$scratch/build.log" 2>&1',
        'build=$?',
        'if [ "$build" -ne 0 ]; then',
        '  echo "fuzz_build exits $build (it succeeds on State A):" >&2',
        '  (cd "$scratch" && tail -c 1500 build.log) >&2',
        "  exit 1",
        "fi",
    ]
    body = [
        *built,
        *_printf_block(data, "$scratch/input"),
        *_printf_block(expected.stdout, "$scratch/expected"),
        "# stdin, stdout and stderr are pipes, as the fuzzer gives them to the program",
        f'{{ cat "$scratch/input" | {command} 2>&1 1>&3 3>&- | cat > "$scratch/stderr"',
        '  echo "${PIPESTATUS[1]}" > "$scratch/status"; } 3>&1 | cat > "$scratch/actual"',
        'status="$(cat "$scratch/status" 2>/dev/null)"',
        'status="${status:-255}"',
        f'if [ "$status" -ne {expected.exit_code} ]; then',
        f'  echo "exit status $status; State A exits {expected.exit_code}" >&2',
        '  (cd "$scratch" && head -c 1500 stderr) >&2',
        "  exit 1",
        "fi",
        'if ! (cd "$scratch" && cmp -s expected actual); then',
        '  echo "stdout differs from State A:" >&2',
        '  (cd "$scratch" && head -c 600 actual) >&2',
        '  echo "its standard error:" >&2',
        '  (cd "$scratch" && head -c 1500 stderr) >&2',
        "  exit 1",
        "fi",
        "exit 0",
    ]
    return "\n".join(header + body) + "\n"


def http_candidate_script(*, adversary: str, seed: int, request: Request, expected: Response,
                     headers: list[str], url_env: str) -> str:
    """candidate.sh: send the request to ``$<url_env>`` and demand State A's response."""
    spec = {
        "method": request.method,
        "target": request.target(),
        "headers": request.header_list(),
        "body": None if request.body is None else base64.b64encode(request.body).decode(),
        "status": expected.status,
        "compare": list(headers),
        "expect_headers": [list(h) for h in expected.headers],
        "expect_body": base64.b64encode(expected.body).decode(),
    }
    literal = json.dumps(spec, ensure_ascii=True, indent=1)
    return "\n".join([
        "#!/bin/bash",
        f"# srb HTTP fuzz adversary {adversary} (seed {seed}): one request, shrunk by delta",
        f"# debugging. State A answers {request.method} {request.target()[:80]}",
        f"# with status {expected.status} and a {len(expected.body)}-byte body; any other",
        "# status, compared header or body is a behavioural difference.",
        "set -u",
        'cd "${TMPDIR:-/tmp}" || exit 70  # out of the tree: this is the judge, not the program',
        "exec python3 - <<'HTTP_CANDIDATE'",
        "import base64, http.client, json, os, sys, urllib.parse",
        f"spec = json.loads({literal!r})",
        f"url = urllib.parse.urlsplit(os.environ[{url_env!r}])",
        "conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)",
        "conn.putrequest(spec['method'], spec['target'], skip_accept_encoding=True)",
        "for name, value in spec['headers']:",
        "    conn.putheader(name, value)",
        "body = None if spec['body'] is None else base64.b64decode(spec['body'])",
        "if body is not None:",
        "    conn.putheader('Content-Length', str(len(body)))",
        "conn.endheaders(body)",
        "reply = conn.getresponse()",
        "got = reply.read()",
        "kept = sorted([k.lower(), v] for k, v in reply.getheaders()",
        "              if k.lower() in spec['compare'])",
        "problems = []",
        "if reply.status != spec['status']:",
        "    problems.append(f\"status {reply.status}, State A answers {spec['status']}\")",
        "if kept != spec['expect_headers']:",
        "    problems.append(f\"headers {kept}, State A sends {spec['expect_headers']}\")",
        "if got != base64.b64decode(spec['expect_body']):",
        "    problems.append('body differs from State A: ' + got[:500].decode('utf-8', 'replace'))",
        "for problem in problems:",
        "    print(problem, file=sys.stderr)",
        "sys.exit(1 if problems else 0)",
        "HTTP_CANDIDATE",
    ]) + "\n"
