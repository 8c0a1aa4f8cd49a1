"""The grader arguments of a fuzz adversary's second domain (services over HTTP).

A probe with ``[metadata] fuzz_domain = "http"`` runs ``grader fuzz-http`` instead of
``grader fuzz``: ``fuzz_server`` (the service's argv relative to the tree, ``{port}`` for
the port), ``fuzz_seeds`` (the seed-request file), optional ``fuzz_headers`` (the response
headers compared), ``fuzz_url_env`` (the variable a candidate reads the service URL from)
and ``server_start_sec``. For the command-line domain, ``fuzz_tokens`` gives the words argv
mutations insert. Either domain may build each tree first: ``fuzz_build`` names a script
under tests/verification (run as ``sh SCRIPT TREE`` in the tree,
:mod:`srb_tui.grader.fuzzing.build`) and ``fuzz_build_timeout_sec`` its time limit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any


def _words(value: Any) -> list[str] | None:
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    return None


DEFAULT_BUILD_TIMEOUT_SEC = 300.0
BUILD_FORM = 'probe.toml [metadata] fuzz_build must name a script under tests/verification ' \
    '(fuzz_build = "fuzz-build.sh", run as `sh SCRIPT TREE` in the tree)'


def build_problem(meta: Mapping[str, Any]) -> str | None:
    """Why ``fuzz_build`` cannot be used as it is written (None: absent or a script name)."""
    build = meta.get("fuzz_build")
    if build is None or (isinstance(build, str) and build.strip()):
        return None
    return BUILD_FORM


def build_timeout(meta: Mapping[str, Any]) -> float:
    """``fuzz_build_timeout_sec`` when it is a positive number, else the default."""
    value = meta.get("fuzz_build_timeout_sec")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return DEFAULT_BUILD_TIMEOUT_SEC


def is_http(meta: Mapping[str, Any]) -> bool:
    return meta.get("fuzz_domain") == "http"


def http_args(meta: Mapping[str, Any], inside: Callable[[str], str]) -> list[str] | str:
    """``fuzz-http`` options from the probe metadata, or a message saying what is missing."""
    server, seeds = _words(meta.get("fuzz_server")), meta.get("fuzz_seeds")
    if server is None or not isinstance(seeds, str):
        return ('probe.toml [metadata] needs fuzz_server (a list of strings) and fuzz_seeds '
                'for fuzz_domain = "http"')
    args = ["--seeds", inside(seeds), "--server-json", json.dumps(server)]
    headers = _words(meta.get("fuzz_headers"))
    if headers is not None:
        args += ["--headers-json", json.dumps(headers)]
    if isinstance(meta.get("fuzz_url_env"), str):
        args += ["--url-env", str(meta["fuzz_url_env"])]
    start = meta.get("server_start_sec")
    if isinstance(start, int | float) and not isinstance(start, bool) and start > 0:
        args += ["--start-timeout", f"{float(start):g}"]
    return args


def cli_token_args(meta: Mapping[str, Any]) -> list[str]:
    tokens = _words(meta.get("fuzz_tokens"))
    return ["--tokens-json", json.dumps(tokens)] if tokens is not None else []
