"""The keys of ``runs.extra`` that a run's lifecycle writes, one typed record each.

``runs.extra`` is a JSON document beside the run's columns. Each key below has one
dataclass that writes it (``to_json``) and reads it back (``read``); readers never pick
fields out of the raw document, and writers change their key alone through
:meth:`srb_tui.store.Store.runs.merge_extra` (one write transaction), so two writers of
different keys never lose each other's work. ``read`` is lenient where old runs may lack
a field: a missing or mistyped document reads as ``None``.

The stage records (``grading``, ``image_builds``) are tables of one record per stage role
written with ``merge_extra(into=...)``; the import record (``imported``) is written once by
``srb import``, the campaign keys (``campaign``, ``max_cost_usd``) once by a campaign's
launch. Every key is named here and has its reader here or, for the records a run's launch
never touches (those just named, ``behavioural_progress`` and ``strength``), in
:mod:`.run_extra_more`: no module outside ``srb_tui/store`` reads the raw document
(``tests/meta/test_run_extra_reads.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from srb_tui.store.records import JsonRecord

R = TypeVar("R")

LEASE = "driver"
ADVERSARY_BUDGET = "adversary_budget_sec"
CLIENT_VERSION = "client_version"
BUDGET = "budget"
CLIENT = "client"
AGENT_EXIT = "agent_exit"
AGENT_LOOP = "agent_loop"
COLLECT = "collect"
BEHAVIOURAL_PROGRESS = "behavioural_progress"
NODE = "node"
LOCAL_NODE = "local"
STRENGTH = "strength"
IMPORTED = "imported"
GRADING = "grading"
IMAGE_BUILDS = "image_builds"
CAMPAIGN = "campaign"
CELL_MAX_COST = "max_cost_usd"
MUTANT_AGENT_PREFIX = "mutant:"
"""A strength campaign's Stage III run of one mutant has agent ``mutant:<campaign>/<id>``;
run lists, reports and resume leave such runs out unless asked for them by agent."""


def _table(extra: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = extra.get(key)
    return value if isinstance(value, Mapping) else None


def _records(extra: Mapping[str, Any], key: str,
             of: Callable[[object], R | None]) -> dict[str, R]:
    """The table under ``key`` read entry by entry with ``of``; unreadable entries left out."""
    found = {k: of(v) for k, v in (_table(extra, key) or {}).items()}
    return {k: v for k, v in found.items() if v is not None}


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class DriverLease(JsonRecord):
    """``driver``: which srb process drives the run (pid on a host, since when);
    ``background`` when it is a driver ``srb run`` handed the run to on Ctrl-C (one that
    ``srb runs cancel`` may stop, since nobody watches it)."""

    pid: int
    host: str
    since: str
    background: bool = False

    @classmethod
    def of(cls, value: object) -> DriverLease | None:
        """The lease a stored value names, None when it names none."""
        t = value if isinstance(value, Mapping) else None
        pid = _int(t.get("pid")) if t else None
        if t is None or pid is None:
            return None
        return cls(pid, _str(t.get("host")) or "", _str(t.get("since")) or "",
                   t.get("background") is True)

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> DriverLease | None:
        return cls.of(extra.get(LEASE))


@dataclass(frozen=True)
class AgentBudget(JsonRecord):
    """``budget``: a real client's gateway budget (cost in USD, tokens)."""

    max_cost_usd: float | None
    max_tokens: int | None

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> AgentBudget:
        t = _table(extra, BUDGET) or {}
        return cls(_num(t.get("max_cost_usd")), _int(t.get("max_tokens")))


def read_adversary_budget(extra: Mapping[str, Any]) -> float | None:
    """``adversary_budget_sec``: the Stage III budget override the run was launched with."""
    return _num(extra.get(ADVERSARY_BUDGET))


def read_node(extra: Mapping[str, Any]) -> str | None:
    """``node``: the engine of the pool the run was placed on (None: never placed, or the
    local backend, whose runs record none and are shown as ``local``)."""
    value = extra.get(NODE)
    return value if isinstance(value, str) and value else None


def read_client_version(extra: Mapping[str, Any]) -> str | None:
    """``client_version``: the client version asked for at launch (over the task's pin)."""
    return _str(extra.get(CLIENT_VERSION))


@dataclass(frozen=True)
class ClientRecord:
    """``client``: the pinned real client a run's agent container holds, and its gateway
    endpoints as the container sees them."""

    name: str
    version: str
    source: str
    sha256: str
    mount: str
    user: str
    anthropic_base: str = ""
    openai_base: str = ""

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "version": self.version, "source": self.source,
                "sha256": self.sha256, "mount": self.mount, "user": self.user,
                "endpoint": {"anthropic_base": self.anthropic_base,
                             "openai_base": self.openai_base}}

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> ClientRecord | None:
        t = _table(extra, CLIENT)
        if t is None or _str(t.get("name")) is None or _str(t.get("version")) is None:
            return None
        ep = _table(t, "endpoint") or {}
        return cls(str(t["name"]), str(t["version"]), _str(t.get("source")) or "",
                   _str(t.get("sha256")) or "", _str(t.get("mount")) or "",
                   _str(t.get("user")) or "1000:1000",
                   _str(ep.get("anthropic_base")) or "", _str(ep.get("openai_base")) or "")


@dataclass(frozen=True)
class AgentExit:
    """``agent_exit``: how the agent's container ended."""

    duration_sec: float | None
    exit_code: int | None
    reason: str
    oom_killed: bool = False
    escalated_to_kill: bool = False
    disk_bytes: int | None = None
    detail: str | None = None
    stop_detail: str | None = None

    def to_json(self) -> dict[str, object]:
        doc = asdict(self)
        if self.stop_detail is None:
            doc.pop("stop_detail")
        return doc

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> AgentExit | None:
        t = _table(extra, AGENT_EXIT)
        if t is None:
            return None
        return cls(_num(t.get("duration_sec")), _int(t.get("exit_code")),
                   _str(t.get("reason")) or "", bool(t.get("oom_killed")),
                   bool(t.get("escalated_to_kill")), _int(t.get("disk_bytes")),
                   _str(t.get("detail")), _str(t.get("stop_detail")))


@dataclass(frozen=True)
class AgentLoop:
    """``agent_loop``: how a real client's round loop ended, its rounds, the store's
    totals of its calls and the gateway ledger's."""

    stop_reason: str
    detail: str | None
    rounds: int | None
    totals: Mapping[str, Any] = field(default_factory=dict)
    ledger: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {"stop_reason": self.stop_reason, "detail": self.detail,
                                  "rounds": self.rounds, "totals": dict(self.totals)}
        if self.ledger is not None:
            doc["ledger"] = dict(self.ledger)
        return doc

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> AgentLoop | None:
        t = _table(extra, AGENT_LOOP)
        if t is None:
            return None
        totals = _table(t, "totals") or {}
        ledger = _table(t, "ledger")
        return cls(_str(t.get("stop_reason")) or "", _str(t.get("detail")),
                   _int(t.get("rounds")), totals, ledger)


@dataclass(frozen=True)
class Collected:
    """``collect``: what collection took from the agent's container."""

    duration_sec: float
    files: int
    bytes: int
    excluded: int
    archive_bytes: int
    rejected: tuple[tuple[str, str], ...]  # the first 200 (member, reason)
    rejected_total: int
    aborted_reason: str | None

    def to_json(self) -> dict[str, object]:
        return {"duration_sec": self.duration_sec, "files": self.files, "bytes": self.bytes,
                "excluded": self.excluded, "archive_bytes": self.archive_bytes,
                "rejected": [{"member": m, "reason": r} for m, r in self.rejected],
                "rejected_total": self.rejected_total, "aborted_reason": self.aborted_reason}

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> Collected | None:
        t = _table(extra, COLLECT)
        if t is None:
            return None
        rejected = tuple((str(r.get("member", "")), str(r.get("reason", "")))
                         for r in t.get("rejected") or () if isinstance(r, Mapping))
        return cls(_num(t.get("duration_sec")) or 0.0, _int(t.get("files")) or 0,
                   _int(t.get("bytes")) or 0, _int(t.get("excluded")) or 0,
                   _int(t.get("archive_bytes")) or 0, rejected,
                   _int(t.get("rejected_total")) or 0, _str(t.get("aborted_reason")))
