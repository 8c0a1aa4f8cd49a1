"""The submission identity itself: a slot's uid, its limits and how a process becomes it.

The part of :mod:`.sandbox` that starting submission code needs, and nothing else: the
``srb-submission`` executable starts once per case, so this module imports only ``os``
and ``resource`` (no json, dataclasses, pathlib or subprocess). :mod:`.sandbox` builds
everything else (spawning, ending and wiping a slot) on it and re-exports these names.
"""

from __future__ import annotations

import os
import resource

from ..contract import CANDIDATE_OFFSET, MAX_SLOTS, SLOT_UID_BASE, candidate_uid, slot_uid

TYPE_CHECKING = False  # not typing's: importing typing costs the launcher ~20 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

# Stage III: a candidate of slot N runs as ``uid_base + CANDIDATE_OFFSET + N`` (its own
# identity, apart from the slot uid its programs run as; :mod:`.exec_broker`).
SCRATCH_ROOT = "/srb/run"
CONFIG_PATH = "/opt/srb/sandbox.json"
DEFAULT_FSIZE_BYTES = 2 * 1024**3
DEFAULT_NPROC = 512


class SandboxError(Exception):
    """The submission identity cannot be set up (a harness fault, never a verdict)."""


class SlotLimits:
    """Per-slot limits applied to every process started as a slot uid, and the container's
    first slot uid (the host draws one per container: RLIMIT_NPROC counts a uid's processes
    across the whole machine, so two stage containers never share a submission uid)."""

    __slots__ = ("fsize_bytes", "nproc", "uid_base")

    def __init__(
        self,
        fsize_bytes: int = DEFAULT_FSIZE_BYTES,
        nproc: int = DEFAULT_NPROC,
        uid_base: int = SLOT_UID_BASE,
    ) -> None:
        self.fsize_bytes = fsize_bytes
        self.nproc = nproc
        self.uid_base = uid_base

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SlotLimits):
            return NotImplemented
        return (self.fsize_bytes, self.nproc, self.uid_base) == (
            other.fsize_bytes, other.nproc, other.uid_base)

    def __hash__(self) -> int:
        return hash((self.fsize_bytes, self.nproc, self.uid_base))

    def __repr__(self) -> str:
        return (f"SlotLimits(fsize_bytes={self.fsize_bytes}, nproc={self.nproc}, "
                f"uid_base={self.uid_base})")


def _positive(data: object, key: str, default: int) -> int:
    value = data.get(key) if isinstance(data, dict) else None
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return int(value) if ok else default  # type: ignore[arg-type]


def _flat_object(text: str) -> dict[str, object]:
    """A JSON object of names and integers, as the host writes sandbox.json (read without
    the json module, which costs the launcher more than the rest of its imports); anything
    else goes to json."""
    body = text.strip()
    found: dict[str, object] = {}
    if body.startswith("{") and body.endswith("}"):
        for item in filter(None, (part.strip() for part in body[1:-1].split(","))):
            name, sep, value = item.partition(":")
            name, value = name.strip(), value.strip()
            if not (sep and len(name) >= 2 and name[0] == name[-1] == '"'
                    and value.lstrip("-").isdigit()):
                break
            found[name[1:-1]] = int(value)
        else:
            return found
    import json

    data = json.loads(text)
    return data if isinstance(data, dict) else {}


_loaded: dict[str, SlotLimits] = {}


def load_limits(path: str | os.PathLike[str] = CONFIG_PATH) -> SlotLimits:
    """The limits the host wrote for this container (defaults when the file is absent);
    read once per path and process."""
    key = os.fspath(path)
    if key not in _loaded:
        try:
            with open(key, encoding="utf-8") as handle:
                data = _flat_object(handle.read())
        except (OSError, ValueError):
            data = {}
        _loaded[key] = SlotLimits(
            fsize_bytes=_positive(data, "fsize_bytes", DEFAULT_FSIZE_BYTES),
            nproc=_positive(data, "nproc", DEFAULT_NPROC),
            uid_base=_positive(data, "uid_base", SLOT_UID_BASE),
        )
    return _loaded[key]


def slot_ids(slot: int) -> tuple[int, int]:
    """(uid, gid) of a slot."""
    if not 0 <= slot < MAX_SLOTS:
        raise SandboxError(f"slot {slot} is outside 0..{MAX_SLOTS - 1}")
    base = load_limits().uid_base
    return slot_uid(base, slot), slot_uid(base, slot)


def candidate_ids(slot: int) -> tuple[int, int]:
    """(uid, gid) a Stage III candidate of ``slot`` runs as: a uid of its own, the slot's
    gid (what it creates in shared folders, with umask 002, its programs may change)."""
    if not 0 <= slot < CANDIDATE_OFFSET - 1:
        raise SandboxError(f"slot {slot} has no candidate identity (0..{CANDIDATE_OFFSET - 2})")
    base = load_limits().uid_base
    return candidate_uid(base, slot), slot_uid(base, slot)


def candidate_group(slot: int) -> int:
    """The group only a Stage III candidate of ``slot`` is in (its staged files)."""
    return candidate_ids(slot)[0]


def enabled() -> bool:
    """True inside a stage container (srb sets ``SRB_SANDBOX=on`` there and starts the grader
    as uid 0). Outside one (a developer's host, unit tests) submission code runs as the
    caller."""
    return os.environ.get("SRB_SANDBOX") == "on" and os.geteuid() == 0


def scratch_path(slot: int) -> str:
    """The slot's own writable folder (a size-limited tmpfs owned by the slot uid)."""
    return f"{SCRATCH_ROOT}/{slot}"


def drop(
    slot: int,
    limits: SlotLimits,
    cwd: str | None = None,
    make: Sequence[str] = (),
    groups: Sequence[int] = (),
    ids: tuple[int, int] | None = None,
) -> Callable[[], None]:
    """What a child runs to become the slot before it execs: OOM score 1000, no core
    dumps, the file-size and process rlimits, only ``groups`` as supplementary groups, the
    slot's gid and uid (or ``ids``), umask 022, the ``make`` folders created as the slot,
    then ``cwd``."""
    uid, gid = ids if ids is not None else slot_ids(slot)

    def become() -> None:
        try:
            with open("/proc/self/oom_score_adj", "w", encoding="ascii") as handle:
                handle.write("1000")
        except OSError:
            pass
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.fsize_bytes, limits.fsize_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))
        os.setgroups(list(groups))
        os.setgid(gid)
        os.setuid(uid)
        os.umask(0o022)
        for folder in make:
            os.makedirs(folder, exist_ok=True)
        if cwd is not None:
            os.chdir(cwd)  # as the slot: its own 0700 scratch is no folder the grader may enter

    return become


def submission_env(
    base: Mapping[str, str], *, home: str, tmpdir: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment submission code gets: ``base`` without any ``SRB_*`` name and without
    the grader's folders on PATH, a private HOME and TMPDIR, no user site-packages."""
    env = {k: v for k, v in base.items() if not k.startswith("SRB_")}
    path = env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep)
    env["PATH"] = os.pathsep.join(p for p in path if p and not p.startswith("/opt/srb"))
    env.update({"HOME": home, "TMPDIR": tmpdir, "PYTHONNOUSERSITE": "1"})
    if extra:
        env.update(extra)
    return env


def prepare_launch(
    extra: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, str], dict[str, str]]:
    """What both launchers (``srb-submission`` and :func:`.submission.run`) start a program
    with: the slot (``SRB_SANDBOX_SLOT``, default 0), its ``home``/``tmp``/``work`` folders
    and the submission's environment. SandboxError when the caller is uid 0 outside a
    stage container: submission code never runs as root."""
    raw = os.environ.get("SRB_SANDBOX_SLOT", "0")
    slot = int(raw) if raw.isdigit() else 0
    if os.geteuid() == 0 and not enabled():
        raise SandboxError("refusing to run submission code as root outside a stage "
                           "container (SRB_SANDBOX is not on)")
    scratch = scratch_path(slot)
    dirs = {name: f"{scratch}/{name}" for name in ("home", "tmp", "work")}
    env = submission_env(os.environ, home=dirs["home"], tmpdir=dirs["tmp"], extra=extra)
    return slot, dirs, env
