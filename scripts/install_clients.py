"""Install the pinned agent clients (Claude Code, Codex CLI, mini-swe-agent) into srb's
client cache.

Used by scripts/test.sh before the tests; a cached, verified version is a no-op, so CI
downloads them once per cache (~/.cache/srb/clients, or SRB_CLIENT_CACHE): the two npm
clients' native binaries are ~600 MB, mini-swe-agent with litellm ~730 MB (pip, ~4 min
cold). Needs npm on the host (Debian: apt-get install nodejs npm).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from srb_tui.agents.clients import ClientError, ensure_installed, resolve_pin


def main() -> int:
    if shutil.which("npm") is None and shutil.which("apt-get") is not None:
        print("install_clients: npm is missing; installing nodejs and npm with apt-get")
        subprocess.run(["apt-get", "install", "-y", "-q", "nodejs", "npm"], check=False)
    for name in ("claude-code", "codex", "mini-swe-agent"):
        pin = resolve_pin(name, None)
        try:
            got = ensure_installed(pin)
        except ClientError as exc:
            print(f"install_clients: {exc}", file=sys.stderr)
            return 1
        print(f"install_clients: {got.pin.name} {got.pin.version} at {got.path} "
              f"(sha256 {got.sha256[:16]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
