"""The Stage III candidate contract, as the published harness defines it.

``candidate_command + [role]`` runs with its working folder set to a fresh, writable copy
of the tree under test and this environment:

=====================  =========================================================
``SRB_CANDIDATE``      absolute path of the candidate's file
``SRB_CANDIDATE_NAME`` the candidate's short name
``SRB_TARGET``         the tree under test (a copy: safe to build in)
``SRB_TARGET_TOKEN``   an opaque label for that tree, stable for the whole stage
``SRB_WORK``           scratch, fresh and empty for every run (the published contract
                       keeps it through a round; srb does not: issue 32)
``SRB_NETWORK``        ``denied`` unless probe.toml allows the network
=====================  =========================================================

The rest is the image's own environment, minus the names of the grading apparatus
(:data:`HARNESS_ENV`: the module contract, srb's sandbox names and anything that names the
role), with the grader's folders taken off ``PATH``/``PYTHONPATH``, a private ``HOME`` and
``TMPDIR`` and a fixed locale, clock zone and hash seed. Names a task declares itself
(``SRB_SHIM`` and the like) are kept, as the published runner keeps them.

The role travels as argv only. The token is ``sha256(salt:role)``: the salt is drawn once
per stage and kept in a file only the grader can read (:func:`load_salt`), so every
candidate of the stage sees the same token for the same tree (task scripts key build caches
on it) and none can compute the other tree's.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..contract import MODULE_CONTRACT_ENV as CONTRACT_NAMES
from ..contract import MODULE_DEADLINE_ENV, SRB_RUNNER_ENV

CANDIDATE_ENV = (
    "SRB_CANDIDATE",
    "SRB_CANDIDATE_NAME",
    "SRB_TARGET",
    "SRB_TARGET_TOKEN",
    "SRB_WORK",
    "SRB_NETWORK",
)
# The published module contract's names (infra/swerefactor/contract.py: CONTRACT_ENV), from
# the contract leaf ...
MODULE_CONTRACT_ENV = frozenset(CONTRACT_NAMES)
# ... names that would tell a candidate its role, and srb's own apparatus.
ROLE_ENV = frozenset({"SRB_TARGET_NAME", "SRB_TARGET_ROLE", "SRB_ROLE", "SRB_ORIGINAL"})
SRB_APPARATUS_ENV = frozenset(
    {
        "SRB_SANDBOX",
        *SRB_RUNNER_ENV,
        *MODULE_DEADLINE_ENV,
        "SRB_SCAN",
        "SRB_VIEW",
        "SRB_CANDIDATE_WORK",
    }
)
HARNESS_ENV = MODULE_CONTRACT_ENV | ROLE_ENV | SRB_APPARATUS_ENV | frozenset(CANDIDATE_ENV)
GRADER_PREFIX = "/opt/srb"
FIXED_ENV = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONNOUSERSITE": "1",
}
TOKEN_CHARS = 16
_ENV_NAME = re.compile(r"\bSRB_[A-Z0-9_]+")


def _strip_grader(value: str, default: str | None) -> str | None:
    parts = [p for p in value.split(os.pathsep) if p and not p.startswith(GRADER_PREFIX)]
    return os.pathsep.join(parts) if parts else default


def contract_env(
    *,
    candidate_file: Path,
    name: str,
    target: Path,
    token: str,
    work: Path,
    home: Path,
    tmpdir: Path,
    task_env: Mapping[str, str] | None = None,
    network_allowed: bool = False,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment one candidate run gets (see the module docstring)."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if k not in HARNESS_ENV}
    path = _strip_grader(env.get("PATH", ""), "/usr/local/bin:/usr/bin:/bin")
    env["PATH"] = path or "/usr/local/bin:/usr/bin:/bin"
    pythonpath = _strip_grader(env.pop("PYTHONPATH", ""), None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    env.update(FIXED_ENV)
    env.update({"HOME": str(home), "TMPDIR": str(tmpdir)})
    env.update(task_env or {})
    env.update(
        {
            "SRB_CANDIDATE": str(candidate_file),
            "SRB_CANDIDATE_NAME": name,
            "SRB_TARGET": str(target),
            "SRB_TARGET_TOKEN": token,
            "SRB_WORK": str(work),
        }
    )
    if not network_allowed:
        env["SRB_NETWORK"] = "denied"
    return env


def target_token(salt: str, role: str) -> str:
    """The opaque label of one role's tree for this stage."""
    return hashlib.sha256(f"{salt}:{role}".encode()).hexdigest()[:TOKEN_CHARS]


def load_salt(path: Path | None) -> str:
    """The stage's token salt: read from ``path``, or drawn and written there (0600, created
    exclusively so concurrent rounds agree); a fresh salt per process without a path."""
    if path is None:
        return secrets.token_hex(16)
    with contextlib.suppress(FileNotFoundError):
        text = path.read_text(encoding="ascii").strip()
        if text:
            return text
    path.parent.mkdir(parents=True, exist_ok=True)
    salt = secrets.token_hex(16)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(salt)
    return salt


def entry_name(names: Iterable[str]) -> str:
    """Which of a candidate's files (relative names) is ``SRB_CANDIDATE``: the only one,
    else ``candidate.sh`` at the top, else another top-level ``candidate.*``, else the first
    top-level file by name, else the first file. Raises ValueError for no file."""
    files = sorted(names)
    if not files:
        raise ValueError("the candidate has no file")
    top = [name for name in files if "/" not in name]
    for name in top:
        if name == "candidate.sh":
            return name
    for name in top:
        if name.split(".", 1)[0] == "candidate":
            return name
    return top[0] if top else files[0]


def candidate_entry(folder: Path) -> Path:
    """The candidate's file in ``folder`` (:func:`entry_name`). Raises FileNotFoundError
    when the folder holds no file."""
    files = [
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink()
    ]
    if not files:
        raise FileNotFoundError(f"the candidate folder {folder} holds no file")
    return folder / entry_name(files)


def script_env_names(command: Sequence[str], cwd: Path | None = None) -> set[str]:
    """``SRB_*`` names the candidate command's own script files mention (the names a task
    script exports to its candidates, e.g. lang03's ``SRB_SQLFORMAT``), minus the role names."""
    names: set[str] = set()
    for word in command:
        path = Path(word)
        if not path.is_absolute() and cwd is not None:
            path = cwd / path
        with contextlib.suppress(OSError, ValueError):
            if path.is_file() and path.stat().st_size < 1_000_000:
                names.update(_ENV_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names - ROLE_ENV - MODULE_CONTRACT_ENV - SRB_APPARATUS_ENV


def allowed_names(command: Sequence[str], task_env: Iterable[str]) -> tuple[str, ...]:
    """The ``SRB_*`` names a candidate may read without the scope scan objecting."""
    return tuple(sorted({*CANDIDATE_ENV, *task_env, *script_env_names(command)}))
