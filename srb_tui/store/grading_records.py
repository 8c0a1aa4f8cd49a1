"""The grading stages' record types, a run's whole detail, and the row conversions.

Kept apart from :mod:`.records` (a run, its transitions, images, containers and log) so
that opening a store to launch a run does not build them: they load with the first
grading read or write, or the first ``run_detail``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path, PurePosixPath
from typing import Any, Final, Self, cast, overload

from srb_tui.store.convert import load_json, record_from_row
from srb_tui.store.errors import StoreError
from srb_tui.store.records import (
    ContainerRecord,
    EventRecord,
    ImageRecord,
    JSONObject,
    JsonRecord,
    RunRecord,
    TransitionRecord,
)


@dataclass(frozen=True)
class StageResultRecord(JsonRecord):
    """The envelope of one grading stage (``result`` is the full stage-result JSON)."""

    run_id: str
    stage: str
    status: str
    started_at: str | None
    duration_sec: float | None
    fingerprint: str | None
    result: Any
    recorded_at: str


@dataclass(frozen=True)
class ModuleResultRecord(JsonRecord):
    """One Stage II module: status, pass rate and check counts."""

    run_id: str
    stage: str
    module_id: str
    position: int
    title: str | None
    weight: float | None
    status: str
    rate: float | None
    passed: int
    failed: int
    skipped: int
    errors: int
    scored: int
    duration_sec: float | None
    detail: Any = None


@dataclass(frozen=True)
class CheckRecord(JsonRecord):
    """One check of a stage (``module_id`` is ``""`` for checks outside a module)."""

    run_id: str
    stage: str
    module_id: str
    position: int
    check_id: str
    verdict: str
    weight: float | None
    summary: str | None
    detail: Any = None
    evidence: Any = None


@dataclass(frozen=True)
class GateVoteRecord(JsonRecord):
    """One reviewer sample's vote on one Stage I gate."""

    run_id: str
    gate_id: str
    sample: int
    verdict: str
    confidence: float | None
    reasoning: str | None
    evidence: Any
    downgraded: bool
    extra: JSONObject = field(default_factory=dict)


@dataclass(frozen=True)
class GateOutcomeRecord(JsonRecord):
    """The decided verdict of one Stage I gate after the vote."""

    run_id: str
    gate_id: str
    title: str | None
    required: bool
    verdict: str
    votes_pass: int
    votes_fail: int
    votes_error: int
    tie: bool
    extra: JSONObject = field(default_factory=dict)


@dataclass(frozen=True)
class AdversaryRoundRecord(JsonRecord):
    """One Stage III adversary lane: ``pending``/``running`` live, then its result."""

    run_id: str
    adversary_id: str
    model: str | None
    driver: str | None
    focus: str | None
    status: str
    started_at: str | None
    duration_sec: float | None
    candidates: int | None
    notes: tuple[str, ...]
    extra: JSONObject = field(default_factory=dict)


@dataclass(frozen=True)
class CounterexampleRecord(JsonRecord):
    """One candidate an adversary handed in, with its adjudication on both trees."""

    id: int
    run_id: str
    adversary_id: str
    created_at: str
    code: str
    verdict: str
    reason: str | None
    output_a: Any
    output_b: Any
    exit_a: int | None
    exit_b: int | None
    duration_a: float | None
    duration_b: float | None
    extra: JSONObject = field(default_factory=dict)


@dataclass(frozen=True)
class RunDetail(JsonRecord):
    """Everything about one run, for ``srb runs show ID --json`` and the run screen."""

    run: RunRecord
    transitions: tuple[TransitionRecord, ...]
    stage_results: tuple[StageResultRecord, ...]
    module_results: tuple[ModuleResultRecord, ...]
    checks: Sequence[CheckRecord]  # CheckRows when read from the store
    gate_votes: tuple[GateVoteRecord, ...]
    gate_outcomes: tuple[GateOutcomeRecord, ...]
    adversary_rounds: tuple[AdversaryRoundRecord, ...]
    counterexamples: tuple[CounterexampleRecord, ...]
    images: tuple[ImageRecord, ...]
    containers: tuple[ContainerRecord, ...]
    events: tuple[EventRecord, ...]
    log_lines: int
    last_log_ts: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild a detail (with its nested records) from ``to_json()`` output."""
        if not isinstance(data, Mapping):
            raise StoreError("RunDetail: expected a JSON object")
        nested: dict[str, type[JsonRecord]] = {
            "transitions": TransitionRecord,
            "stage_results": StageResultRecord,
            "module_results": ModuleResultRecord,
            "checks": CheckRecord,
            "gate_votes": GateVoteRecord,
            "gate_outcomes": GateOutcomeRecord,
            "adversary_rounds": AdversaryRoundRecord,
            "counterexamples": CounterexampleRecord,
            "images": ImageRecord,
            "containers": ContainerRecord,
            "events": EventRecord,
        }
        expected = {f.name for f in fields(cast(Any, cls))}
        unknown = sorted(set(data) - expected)
        missing = sorted(expected - set(data))
        if unknown or missing:
            raise StoreError(
                f"RunDetail: unknown keys {unknown or '-'}; missing keys {missing or '-'}"
            )
        kwargs: dict[str, Any] = {
            "run": RunRecord.from_json(data["run"]),
            "log_lines": data["log_lines"],
            "last_log_ts": data["last_log_ts"],
        }
        for name, record_cls in nested.items():
            items = data[name]
            if not isinstance(items, list):
                raise StoreError(f"RunDetail: {name} must be a list")
            kwargs[name] = tuple(record_cls.from_json(item) for item in items)
        return cls(**kwargs)


IMPORTED_FILE = "srb_imported_file"
"""The key of a stage result kept beside the store file (``srb import``: the published
file's text, written once as a file instead of twice through the WAL); the value is its
path relative to the store's folder."""


def stored_result(text: str | None, what: str, root: Path | None) -> Any:
    """A ``stage_results.result`` column decoded, reading it from its file under ``root``
    when the column only names one (:data:`IMPORTED_FILE`)."""
    value = load_json(text, what)
    if not (isinstance(value, dict) and len(value) == 1 and IMPORTED_FILE in value):
        return value
    name = str(value[IMPORTED_FILE])
    parts = PurePosixPath(name).parts
    if root is None or not parts or parts[0] == "/" or ".." in parts:
        raise StoreError(f"{what}: kept in {name!r}, which this store cannot read")
    try:
        kept = (root / name).read_text(encoding="utf-8")
    except OSError as exc:
        raise StoreError(f"{what}: its file {name} cannot be read ({exc})") from exc
    return load_json(kept, f"{what} ({name})")


def stage_from_row(row: sqlite3.Row, root: Path | None = None) -> StageResultRecord:
    """A ``stage_results`` row as a StageResultRecord (``root``: the store's folder, where
    an imported result's file lives)."""
    return record_from_row(
        StageResultRecord, row,
        result=stored_result(row["result"], f"run {row['run_id']} {row['stage']} result", root),
    )


def module_from_row(row: sqlite3.Row) -> ModuleResultRecord:
    """A ``module_results`` row as a ModuleResultRecord."""
    what = f"run {row['run_id']} module {row['module_id']}"
    return record_from_row(ModuleResultRecord, row, detail=load_json(row["detail"], what))


def _check_fields(row: sqlite3.Row | tuple[Any, ...]) -> JSONObject:
    """A ``checks`` row (or its INSERT parameters, in column order) as CheckRecord's fields
    by name, with its JSON columns decoded."""
    run_id, stage, module_id, position, check_id, verdict, weight, summary, detail, evidence = (
        tuple(row)
    )
    if detail != "null" or evidence != "null":  # the message text only when there is JSON
        what = f"run {run_id} check {check_id}"
        detail = load_json(detail, f"{what} detail")
        evidence = load_json(evidence, f"{what} evidence")
    else:
        detail = evidence = None
    return {"run_id": run_id, "stage": stage, "module_id": module_id, "position": position,
            "check_id": check_id, "verdict": verdict, "weight": weight, "summary": summary,
            "detail": detail, "evidence": evidence}


def check_from_row(row: sqlite3.Row | tuple[Any, ...]) -> CheckRecord:
    """A ``checks`` row (or its INSERT parameters, in column order) as a CheckRecord."""
    return CheckRecord(**_check_fields(row))


class CheckRows(Sequence[CheckRecord]):
    """The checks just written by ``record_checks``, each made a CheckRecord when read:
    Stage II writes 25,000 a run at the paper's scale and reads none of them back."""

    def __init__(self, rows: Sequence[tuple[Any, ...] | sqlite3.Row]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> CheckRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[CheckRecord]: ...

    def __getitem__(self, index: int | slice) -> CheckRecord | list[CheckRecord]:
        if isinstance(index, slice):
            return [check_from_row(row) for row in self._rows[index]]
        return check_from_row(self._rows[index])

    def __iter__(self) -> Iterator[CheckRecord]:
        for row in self._rows:
            yield check_from_row(row)

    def where(self, stage: str, *, verdicts: Container[str] | None = None,
              module_id: str | None = None) -> list[CheckRecord]:
        """The checks of ``stage`` (whose verdict is one of ``verdicts``, of ``module_id``)
        as records; the others stay rows (the Run screen's failing checks among 25,000)."""
        return [check_from_row(row) for row in self._rows
                if row[1] == stage and (verdicts is None or row[5] in verdicts)
                and (module_id is None or row[2] == module_id)]

    def json_rows(self) -> list[JSONObject]:
        """``[check.to_json() for check in self]`` without making the records (``runs show
        --json`` of a run with 21,769 checks)."""
        return [_check_fields(row) for row in self._rows]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CheckRows):  # row by row, no records made
            return len(self._rows) == len(other._rows) and all(
                tuple(a) == tuple(b) for a, b in zip(self._rows, other._rows, strict=True))
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def vote_from_row(row: sqlite3.Row) -> GateVoteRecord:
    """A ``gate_votes`` row as a GateVoteRecord."""
    what = f"run {row['run_id']} gate {row['gate_id']} sample {row['sample']}"
    return record_from_row(
        GateVoteRecord, row, what, json_cols=_EVIDENCE, bool_cols=_DOWNGRADED
    )


def outcome_from_row(row: sqlite3.Row) -> GateOutcomeRecord:
    """A ``gate_outcomes`` row as a GateOutcomeRecord."""
    what = f"run {row['run_id']} gate {row['gate_id']}"
    return record_from_row(GateOutcomeRecord, row, what, bool_cols=_OUTCOME_BOOLS)


def adversary_from_row(row: sqlite3.Row) -> AdversaryRoundRecord:
    """An ``adversary_rounds`` row as an AdversaryRoundRecord."""
    what = f"run {row['run_id']} adversary {row['adversary_id']}"
    return record_from_row(AdversaryRoundRecord, row, what, list_cols=_NOTES)


def counterexample_from_row(row: sqlite3.Row) -> CounterexampleRecord:
    """A ``counterexamples`` row as a CounterexampleRecord."""
    what = f"run {row['run_id']} counterexample {row['id']}"
    return record_from_row(CounterexampleRecord, row, what, json_cols=_OUTPUTS)


_EVIDENCE: Final = frozenset({"evidence"})
_DOWNGRADED: Final = frozenset({"downgraded"})
_OUTCOME_BOOLS: Final = frozenset({"required", "tie"})
_NOTES: Final = frozenset({"notes"})
_OUTPUTS: Final = frozenset({"output_a", "output_b"})


__all__ = [
    "AdversaryRoundRecord", "CheckRecord", "CheckRows", "CounterexampleRecord", "GateOutcomeRecord",
    "GateVoteRecord", "ModuleResultRecord", "RunDetail", "StageResultRecord",
    "adversary_from_row", "check_from_row", "counterexample_from_row", "module_from_row",
    "outcome_from_row", "stage_from_row", "vote_from_row",
]  # fmt: skip
