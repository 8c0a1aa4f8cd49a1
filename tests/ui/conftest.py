"""Console tests must not leave engine objects behind: the session-wide check in
``tests/conftest.py`` only says *that* something leaked; this one names the test.

A console started over a store with pending or preparing runs drives them (that is the
product's re-attach), so a test that seeds such runs without meaning to drive them uses
``tests.ui.helpers.quiet_app``; forgetting it shows up here as a leaked agent container.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from tests.conftest import _managed_containers


@pytest.fixture(autouse=True)
def no_leaked_containers() -> Iterator[None]:
    before = _managed_containers()
    yield
    if before is None:
        return
    left = sorted((_managed_containers() or set()) - before)
    if not left:
        return
    names = [name for name in left if not name.startswith("volume:")]
    if names:  # leave the engine as the next test expects it, then fail this one
        subprocess.run(["docker", "rm", "-f", *names], capture_output=True, timeout=60,
                       check=False)
    pytest.fail(f"the test left srb-managed engine objects: {', '.join(left)}")
