"""The environment a behavioural module runs with (the published runner's contract).

The inherited base (the image's environment) minus inherited ``SRB_*`` names the image does
not declare, srb's determinism defaults, the suite's and module's ``env``, then the runner's
names; ``PYTHONPATH`` gets the suite's ``lib_dir`` first and the ``swerefactor`` runtime
second, in front of whatever the image had.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..boundary import sandbox
from ..boundary.submission import LAUNCHER, LIBRARY_DIR
from ..contract import MODULE_CONTRACT_ENV, MODULE_DEADLINE_ENV, SRB_RUNNER_ENV
from .manifest import SuiteManifest, SuiteModule

CONTRACT_DEFAULTS = {"PYTHONHASHSEED": "0", "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"}
SUITE_SLOT = 0
PUBLISHED_RUNTIME = Path("/opt/swerefactor")
"""Where the published harness's images carry their runtime (``swerefactor`` package)."""
SRB_RUNTIME = Path(__file__).resolve().parent.parent / "runtime"
"""srb's own ``swerefactor`` package (contract + pytest plugin), used when an image has
none of its own."""
RUNNER_NAMES = frozenset((*MODULE_CONTRACT_ENV, *MODULE_DEADLINE_ENV, *SRB_RUNNER_ENV))
"""The names the runner sets itself; a module sees them only with the runner's values."""


def runtime_dir(published: Path = PUBLISHED_RUNTIME) -> Path:
    """The folder that provides ``swerefactor`` to modules: the image's own published
    runtime when it carries one, else srb's."""
    if (published / "swerefactor" / "__init__.py").is_file():
        return published
    return SRB_RUNTIME


def python_path(
    suite: SuiteManifest, inherited: str | None, runtime: Path | None = None,
    srb_lib: str | None = None,
) -> str:
    """``PYTHONPATH`` for a module: the suite's ``lib_dir`` first (as the published runner
    puts it), then the ``swerefactor`` runtime, then srb's ``srb_submission`` folder (in a
    stage container), then whatever the image already had (last, as the published runner
    keeps it)."""
    lib = (suite.root / suite.lib_dir).resolve()
    parts = [str(p) for p in (lib, runtime or runtime_dir()) if p.is_dir()]
    if srb_lib:
        parts.append(srb_lib)
    parts.extend(p for p in (inherited or "").split(os.pathsep) if p and p not in parts)
    return os.pathsep.join(parts)


def module_env(
    suite: SuiteManifest,
    module: SuiteModule,
    *,
    repo: Path,
    original: Path | None,
    work: Path,
    suite_work: Path,
    result: Path,
    deadline: float,
    base: Mapping[str, str] | None = None,
    home: Path | None = None,
    keep: frozenset[str] = frozenset(),
    runtime: Path | None = None,
) -> dict[str, str]:
    """The environment a module runs with: the inherited base (the image's environment),
    defaults, suite env, module env, then the runner's contract (which nothing overrides).

    Inherited ``SRB_*`` names are dropped unless ``keep`` names them (the image declares
    them: a task's own inputs, such as a shim switch); names the suite or module declares
    are the task's and stay. ``SRB_ORIGINAL`` is set only when State A is there, as the
    published runner does. ``PYTHONPATH`` is prepended to, never replaced
    (:func:`python_path`). In a stage container the contract also names the launcher
    modules start submission code with (``SRB_SUBMISSION_RUN``) and puts its in-process
    form (``import srb_submission``, :mod:`..boundary.submission`) on ``PYTHONPATH`` before the
    image's own entries; a module
    gets a private HOME and no user site-packages."""
    inherited = os.environ if base is None else base
    env = {
        k: v
        for k, v in inherited.items()
        if not k.startswith("SRB_") or (k in keep and k not in RUNNER_NAMES)
    }
    env.update(CONTRACT_DEFAULTS)
    env.setdefault("LC_ALL", "C.UTF-8")
    env.update(suite.env)
    env.update(module.env)
    env.update(
        {
            "SRB_REPO": str(repo),
            "SRB_MODULE_DIR": str(module.dir),
            "SRB_MODULE_ID": module.id,
            "SRB_SUITE_DIR": str(suite.root),
            "SRB_WORK": str(work),
            "SRB_SUITE_WORK": str(suite_work),
            "SRB_RESULT": str(result),
            "SRB_MODULE_TIMEOUT_SEC": f"{module.timeout_sec:g}",
            "SRB_MODULE_DEADLINE": f"{deadline:.3f}",
        }
    )
    if original is not None:
        env["SRB_ORIGINAL"] = str(original)
    else:
        env.pop("SRB_ORIGINAL", None)
    on = sandbox.enabled()
    env["PYTHONPATH"] = python_path(
        suite, env.get("PYTHONPATH"), runtime, srb_lib=LIBRARY_DIR if on else None)
    env["PYTHONNOUSERSITE"] = "1"
    if home is not None:
        env["HOME"] = str(home)
    if on:
        env["SRB_SANDBOX"] = "on"
        env["SRB_SUBMISSION_RUN"] = LAUNCHER
        env["SRB_SANDBOX_SLOT"] = str(SUITE_SLOT)
    return env
