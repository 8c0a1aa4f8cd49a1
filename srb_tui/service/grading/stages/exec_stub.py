"""The exec stub of Stage III's boundary, built on the host
(:mod:`srb_tui.grader.boundary.exec_broker`).

The stub is a few lines of C (``srb_tui/grader/stub/exec_stub.c``) built static, so it runs
in any stage image whatever its C library. It is built once per source and machine with the
host's C compiler and kept in ``~/.cache/srb/exec-stub/``; every stage container gets it at
``/@`` (Stage II too, so the file is no sign of which stage a program runs in).
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from srb_tui import grader as grader_package

SOURCE = Path(grader_package.__file__).parent / "stub" / "exec_stub.c"


class StubUnavailable(Exception):
    """The stub cannot be built on this host (no C compiler or no static C library)."""


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "srb" / "exec-stub"


_built: dict[Path, bytes] = {}


def stub_binary(cache: Path | None = None) -> bytes:
    """The stub's bytes, built on first use. Raises StubUnavailable saying what is missing."""
    source = SOURCE.read_bytes()
    key = hashlib.sha256(source + platform.machine().encode()).hexdigest()[:16]
    path = (cache or cache_dir()) / f"exec-stub-{platform.machine()}-{key}"
    if path in _built:
        return _built[path]
    if not path.is_file():
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            raise StubUnavailable(
                "Stage III needs a C compiler on this host to build srb's exec stub once "
                "(install gcc and the static C library: apt-get install gcc libc6-dev)"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent) as work:
            out = Path(work) / "stub"
            done = subprocess.run(
                [compiler, "-static", "-Os", "-s", "-o", str(out), str(SOURCE)],
                capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise StubUnavailable(
                    f"cannot build srb's exec stub with {compiler} -static: "
                    f"{done.stderr.strip()[-300:]}"
                )
            os.replace(out, path)
    _built[path] = path.read_bytes()
    return _built[path]
