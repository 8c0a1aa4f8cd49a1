"""Typed, frozen rows of the store, each with ``to_json()`` and ``from_json()``.

JSON-valued columns (``detail``, ``result``, ``payload``, ``extra`` …) hold whatever
``json.loads`` produced; list-of-text columns (``notes``) are tuples.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, NamedTuple, Self, cast, get_type_hints

from srb_tui.store.errors import StoreError

JSONObject = dict[str, Any]


_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    if type(value) in _SCALARS:  # most fields: no isinstance chain (25,000 checks a run)
        return value
    if isinstance(value, JsonRecord):
        return value.to_json()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    json_rows = getattr(value, "json_rows", None)  # rows read lazily (CheckRows)
    if json_rows is not None:
        return json_rows()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


_TUPLE_FIELDS: dict[type, frozenset[str]] = {}
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    known = _FIELD_NAMES.get(cls)
    if known is None:
        known = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cast(Any, cls)))
    return known


def _tuple_fields(cls: type) -> frozenset[str]:
    known = _TUPLE_FIELDS.get(cls)
    if known is None:
        hints = get_type_hints(cls)
        known = frozenset(
            name for name, hint in hints.items() if getattr(hint, "__origin__", None) is tuple
        )
        _TUPLE_FIELDS[cls] = known
    return known


class JsonRecord:
    """Mixin for the record dataclasses: a plain-JSON view and its inverse."""

    def to_json(self) -> JSONObject:
        """The record as a dict of JSON values (tuples become lists)."""
        return {name: _plain(getattr(self, name)) for name in _field_names(type(self))}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild a record from ``to_json()`` output; unknown or missing keys are errors."""
        if not isinstance(data, Mapping):
            raise StoreError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        names = {f.name for f in fields(cast(Any, cls))}
        unknown = sorted(set(data) - names)
        if unknown:
            raise StoreError(f"{cls.__name__}: unknown keys {', '.join(unknown)}")
        tuples = _tuple_fields(cls)
        kwargs: dict[str, Any] = {}
        for f in fields(cast(Any, cls)):
            if f.name not in data:
                if f.default is MISSING and f.default_factory is MISSING:
                    raise StoreError(f"{cls.__name__}: missing key {f.name!r}")
                continue
            value = data[f.name]
            if f.name in tuples and isinstance(value, list):
                value = tuple(value)
            kwargs[f.name] = value
        return cls(**kwargs)


@dataclass(frozen=True)
class RunRecord(JsonRecord):
    """One run: what was asked for, where it is in its lifecycle, and its score."""

    id: str
    task_id: str
    task_path: str
    agent: str
    model: str | None
    effort: str | None
    budget_sec: float | None
    status: str
    phase: str | None
    stop_reason: str | None
    created_at: str
    updated_at: str
    started_at: str | None
    finished_at: str | None
    valid: bool | None
    score: float | None
    max_score: float | None
    blocked_by: str | None
    harness_error: str | None
    notes: tuple[str, ...]
    grader_fingerprint: str | None
    submission_files: int | None
    submission_bytes: int | None
    batch_id: str | None
    extra: JSONObject = field(default_factory=dict)


@dataclass(frozen=True)
class TransitionRecord(JsonRecord):
    """One status change of a run (``from_status`` is None for the creation row)."""

    id: int
    run_id: str
    from_status: str | None
    to_status: str
    at: str
    reason: str | None


@dataclass(frozen=True)
class ImageRecord(JsonRecord):
    """The image a run used for one role, with its id and digest."""

    run_id: str
    role: str
    tag: str
    image_id: str | None
    digest: str | None
    recorded_at: str


@dataclass(frozen=True)
class ContainerRecord(JsonRecord):
    """A container srb created for a run (for re-attach and reaping)."""

    container_id: str
    run_id: str
    role: str
    name: str
    created_at: str
    last_log_ts: str | None
    exit_code: int | None
    removed_at: str | None


@dataclass(frozen=True)
class EventRecord(JsonRecord):
    """One service event (``seq`` is global and increasing; ``run_id`` may be None)."""

    seq: int
    run_id: str | None
    at: str
    kind: str
    payload: Any


@dataclass(frozen=True)
class LogLine(JsonRecord):
    """One stored line of a run's container log (``seq`` counts from 1 without gaps)."""

    run_id: str
    seq: int
    ts: str
    stream: str
    text: str


class LogEntry(NamedTuple):
    """A log line as the runner hands it in: Docker timestamp, stream, text."""

    ts: str
    stream: str
    text: str


@dataclass(frozen=True)
class LogResumePoint(JsonRecord):
    """Where a run's stored log ends, to re-attach without gap or duplicate.

    Ask Docker for logs ``since`` ``last_ts`` and pass them through ``LogDeduper(point)``:
    it drops lines before ``last_ts`` and the ``(stream, text)`` pairs ``at_last_ts`` that were
    already stored at that very instant.
    """

    run_id: str
    max_seq: int
    last_ts: str | None
    at_last_ts: tuple[tuple[str, str], ...] = ()


