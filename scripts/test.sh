#!/usr/bin/env bash
# The whole test suite on a fresh machine: a Docker engine (installed and started
# when absent), the srb base image, a virtualenv with srb and its dev extra, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-docker.sh
bash scripts/bootstrap-base.sh

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q -e '.[dev]'
# The pinned agent clients the agent tests run (cached in ~/.cache/srb/clients).
.venv/bin/python scripts/install_clients.py

.venv/bin/ruff check srb_tui tests bench
.venv/bin/lint-imports
exec .venv/bin/python -m pytest "$@"
