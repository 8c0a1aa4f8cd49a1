"""Converters between SQLite rows / caller input and the typed records.

Rows come from connections whose ``row_factory`` is ``sqlite3.Row``. Input mappings (checks,
modules, gate votes and outcomes in the shapes of the stage-result envelopes) are validated
here so that bad input becomes a StoreError that names the run and the item.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

from srb_tui.grader import contract
from srb_tui.store.errors import StoreError
from srb_tui.store.records import (
    ContainerRecord,
    EventRecord,
    ImageRecord,
    JsonRecord,
    LogLine,
    RunRecord,
    TransitionRecord,
    _field_names,
)

R = TypeVar("R", bound=JsonRecord)

CHECK_VERDICTS: Final = frozenset({"pass", "fail", "skip", "error"})
MODULE_STATUSES: Final = frozenset(contract.MODULE_STATUSES)
VOTE_VERDICTS: Final = frozenset({"pass", "fail", "error"})
ADVERSARY_STATUSES: Final = frozenset({"pending", "running", "broken", "survived", "error"})
COUNTEREXAMPLE_VERDICTS: Final = frozenset(
    {"upheld", "nondeterministic", "invalid", "rejected"}
)
"""A judged candidate's verdict. ``nondeterministic``: State A passed every rerun and the
submission failed some and passed others (issue 32; a break where the task counts it, see
``extra.counts_as_break``)."""


# --- encoding --------------------------------------------------------------------------------


_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
"""One encoder for every column (``json.dumps`` with options builds a new one per call)."""


def dump_json(value: Any, what: str) -> str:
    """``value`` as compact JSON text; StoreError naming ``what`` if it is not JSON."""
    if value is None:
        return "null"
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{what}: not storable as JSON ({exc})") from exc


def load_json(text: str | None, what: str) -> Any:
    """Decode a JSON column; StoreError naming ``what`` if the stored text is damaged."""
    if text is None or text == "null":
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise StoreError(f"{what}: stored JSON is damaged ({exc})") from exc


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


# --- typed input checks ----------------------------------------------------------------------


def need_text(value: Any, what: str, *, optional: bool = False) -> str | None:
    """``value`` if it is non-empty text (or None when ``optional``), else StoreError."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise StoreError(f"{what}: expected non-empty text, got {value!r}")
    return value


def maybe_str(value: Any, what: str) -> str | None:
    """``value`` if it is text (empty allowed) or None, else StoreError."""
    if value is not None and not isinstance(value, str):
        raise StoreError(f"{what}: expected text, got {value!r}")
    return value


def need_number(value: Any, what: str, *, optional: bool = True) -> float | None:
    """``value`` as a finite float (booleans refused)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise StoreError(f"{what}: expected a number, got {value!r}")
    if not math.isfinite(value):
        raise StoreError(f"{what}: expected a finite number, got {value!r}")
    return float(value)


def need_int(value: Any, what: str, *, optional: bool = True) -> int | None:
    """``value`` as an int (booleans and floats refused)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise StoreError(f"{what}: expected a whole number, got {value!r}")
    return value


def need_bool(value: Any, what: str, *, optional: bool = False) -> bool | None:
    """``value`` if it is a real boolean (0/1 and "true" refused)."""
    if value is None and optional:
        return None
    if not isinstance(value, bool):
        raise StoreError(f"{what}: expected true or false, got {value!r}")
    return value


def need_choice(value: Any, choices: frozenset[str], what: str) -> str:
    """``value`` if it is one of ``choices``."""
    if value not in choices:
        raise StoreError(f"{what}: {value!r} is not one of {', '.join(sorted(choices))}")
    return str(value)


def need_text_list(value: Any, what: str) -> list[str]:
    """``value`` as a list of strings (a tuple is fine)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise StoreError(f"{what}: expected a list of text, got {value!r}")
    return list(value)


def need_object(value: Any, what: str) -> dict[str, Any]:
    """``value`` as a dict with text keys (``None`` means empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise StoreError(f"{what}: expected a JSON object, got {value!r}")
    return dict(value)


def _check_keys(item: Any, allowed: frozenset[str], required: frozenset[str], what: str) -> None:
    if not isinstance(item, Mapping):
        raise StoreError(f"{what}: expected a JSON object, got {type(item).__name__}")
    unknown = sorted(set(item) - allowed)
    if unknown:
        raise StoreError(f"{what}: unknown keys {', '.join(map(str, unknown))}")
    missing = sorted(required - set(item))
    if missing:
        raise StoreError(f"{what}: missing keys {', '.join(missing)}")


_CHECK_KEYS: Final = frozenset({"id", "verdict", "weight", "summary", "detail", "evidence"})


def _plain_json(value: Any) -> str | None:
    if value is None:
        return "null"
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError):
        return None


def _plain_check_row(
    run_id: str, stage: str, module_id: str, position: int, item: Any
) -> tuple[Any, ...] | None:
    """The row of a check that needs no message (25,000 a run at the paper's scale), or
    None when anything about it is unusual: the checked path then says what is wrong."""
    if not isinstance(item, dict) or not _CHECK_KEYS.issuperset(item):
        return None
    cid, verdict = item.get("id"), item.get("verdict")
    weight, summary = item.get("weight"), item.get("summary")
    if not (isinstance(cid, str) and cid and verdict in CHECK_VERDICTS):
        return None
    if weight is not None and not (type(weight) in (int, float) and math.isfinite(weight)):
        return None
    if summary is not None and not isinstance(summary, str):
        return None
    detail, evidence = _plain_json(item.get("detail")), _plain_json(item.get("evidence"))
    if detail is None or evidence is None:
        return None
    return (run_id, stage, module_id, position, cid, verdict,
            None if weight is None else float(weight), summary, detail, evidence)


def check_params(
    run_id: str, stage: str, module_id: str, checks: Sequence[Mapping[str, Any]]
) -> list[tuple[Any, ...]]:
    """Rows for ``checks`` from envelope-shaped check objects (``{id, verdict, …}``)."""
    rows: list[tuple[Any, ...]] = []
    for position, item in enumerate(checks):
        fast = _plain_check_row(run_id, stage, module_id, position, item)
        if fast is not None:  # a well-formed check: no per-item message text is built
            rows.append(fast)
            continue
        what = f"run {run_id} {stage} check #{position}"
        _check_keys(item, _CHECK_KEYS, frozenset({"id", "verdict"}), what)
        rows.append(
            (
                run_id,
                stage,
                module_id,
                position,
                need_text(item["id"], f"{what} id"),
                need_choice(item["verdict"], CHECK_VERDICTS, f"{what} verdict"),
                need_number(item.get("weight"), f"{what} weight"),
                maybe_str(item.get("summary"), f"{what} summary"),
                dump_json(item.get("detail"), f"{what} detail"),
                dump_json(item.get("evidence"), f"{what} evidence"),
            )
        )
    return rows


_MODULE_KEYS: Final = frozenset(
    {
        "id",
        "title",
        "weight",
        "status",
        "rate",
        "passed",
        "failed",
        "skipped",
        "errors",
        "scored",
        "duration_sec",
        "detail",
    }
)


def module_params(
    run_id: str, stage: str, modules: Sequence[Mapping[str, Any]]
) -> list[tuple[Any, ...]]:
    """Rows for module results (``{id, status, rate?, passed?, …}``)."""
    rows: list[tuple[Any, ...]] = []
    for position, item in enumerate(modules):
        what = f"run {run_id} {stage} module #{position}"
        _check_keys(item, _MODULE_KEYS, frozenset({"id", "status"}), what)
        counts = [
            need_int(item.get(key, 0), f"{what} {key}", optional=False)
            for key in ("passed", "failed", "skipped", "errors", "scored")
        ]
        rows.append(
            (
                run_id,
                stage,
                need_text(item["id"], f"{what} id"),
                position,
                need_text(item.get("title"), f"{what} title", optional=True),
                need_number(item.get("weight"), f"{what} weight"),
                need_choice(item["status"], MODULE_STATUSES, f"{what} status"),
                need_number(item.get("rate"), f"{what} rate"),
                *counts,
                need_number(item.get("duration_sec"), f"{what} duration_sec"),
                dump_json(item.get("detail"), f"{what} detail"),
            )
        )
    return rows


_VOTE_KEYS: Final = frozenset(
    {"gate_id", "sample", "verdict", "confidence", "reasoning", "evidence", "downgraded", "extra"}
)


def vote_params(run_id: str, votes: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """Rows for gate votes (``{gate_id, sample, verdict, confidence?, …}``)."""
    rows: list[tuple[Any, ...]] = []
    for index, item in enumerate(votes):
        what = f"run {run_id} gate vote #{index}"
        _check_keys(item, _VOTE_KEYS, frozenset({"gate_id", "sample", "verdict"}), what)
        rows.append(
            (
                run_id,
                need_text(item["gate_id"], f"{what} gate_id"),
                need_int(item["sample"], f"{what} sample", optional=False),
                need_choice(item["verdict"], VOTE_VERDICTS, f"{what} verdict"),
                need_number(item.get("confidence"), f"{what} confidence"),
                maybe_str(item.get("reasoning"), f"{what} reasoning"),
                dump_json(item.get("evidence"), f"{what} evidence"),
                int(bool(need_bool(item.get("downgraded", False), f"{what} downgraded"))),
                dump_json(need_object(item.get("extra"), f"{what} extra"), f"{what} extra"),
            )
        )
    return rows


_OUTCOME_KEYS: Final = frozenset(
    {
        "gate_id",
        "title",
        "required",
        "verdict",
        "votes_pass",
        "votes_fail",
        "votes_error",
        "tie",
        "extra",
    }
)


def outcome_params(run_id: str, outcomes: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """Rows for gate outcomes (``{gate_id, verdict, required?, votes_pass?, …}``)."""
    rows: list[tuple[Any, ...]] = []
    for index, item in enumerate(outcomes):
        what = f"run {run_id} gate outcome #{index}"
        _check_keys(item, _OUTCOME_KEYS, frozenset({"gate_id", "verdict"}), what)
        rows.append(
            (
                run_id,
                need_text(item["gate_id"], f"{what} gate_id"),
                need_text(item.get("title"), f"{what} title", optional=True),
                int(bool(need_bool(item.get("required", True), f"{what} required"))),
                need_choice(item["verdict"], VOTE_VERDICTS, f"{what} verdict"),
                need_int(item.get("votes_pass", 0), f"{what} votes_pass", optional=False),
                need_int(item.get("votes_fail", 0), f"{what} votes_fail", optional=False),
                need_int(item.get("votes_error", 0), f"{what} votes_error", optional=False),
                int(bool(need_bool(item.get("tie", False), f"{what} tie"))),
                dump_json(need_object(item.get("extra"), f"{what} extra"), f"{what} extra"),
            )
        )
    return rows


# --- rows to records -------------------------------------------------------------------------


def record_from_row(
    cls: type[R],
    row: sqlite3.Row,
    what: str = "",
    *,
    json_cols: frozenset[str] = frozenset(),
    list_cols: frozenset[str] = frozenset(),
    bool_cols: frozenset[str] = frozenset(),
    **given: Any,
) -> R:
    """A row as a record of ``cls``, each field from the column of its name: ``json_cols``
    parsed, ``list_cols`` parsed and made a tuple (``()`` if not a list), ``bool_cols`` made
    bools, ``extra`` parsed as a JSON object, and any field in ``given`` taken as given.
    Error messages name ``what`` (``"{what} {column}"``)."""
    kwargs: dict[str, Any] = {}
    for name in _field_names(cls):
        if name in given:
            kwargs[name] = given[name]
        elif name == "extra":
            kwargs[name] = need_object(load_json(row[name], f"{what} extra"), f"{what} extra")
        elif name in json_cols:
            kwargs[name] = load_json(row[name], f"{what} {name}")
        elif name in list_cols:
            loaded = load_json(row[name], f"{what} {name}")
            kwargs[name] = tuple(loaded) if isinstance(loaded, list) else ()
        elif name in bool_cols:
            kwargs[name] = bool(row[name])
        else:
            kwargs[name] = row[name]
    return cls(**kwargs)


_NOTES: Final = frozenset({"notes"})


def run_from_row(row: sqlite3.Row) -> RunRecord:
    """A ``runs`` row as a RunRecord."""
    return record_from_row(
        RunRecord, row, f"run {row['id']}", list_cols=_NOTES, valid=_bool(row["valid"])
    )


def transition_from_row(row: sqlite3.Row) -> TransitionRecord:
    """A ``run_transitions`` row as a TransitionRecord."""
    return record_from_row(TransitionRecord, row)


def image_from_row(row: sqlite3.Row) -> ImageRecord:
    """An ``images`` row as an ImageRecord."""
    return record_from_row(ImageRecord, row)


def container_from_row(row: sqlite3.Row) -> ContainerRecord:
    """A ``containers`` row as a ContainerRecord."""
    return record_from_row(ContainerRecord, row)


def event_from_row(row: sqlite3.Row) -> EventRecord:
    """An ``events`` row as an EventRecord."""
    return EventRecord(
        seq=row["seq"],
        run_id=row["run_id"],
        at=row["at"],
        kind=row["kind"],
        payload=load_json(row["payload"], f"event {row['seq']} payload"),
    )


def log_from_row(row: sqlite3.Row) -> LogLine:
    """A ``log_lines`` row as a LogLine."""
    return LogLine(
        run_id=row["run_id"], seq=row["seq"], ts=row["ts"], stream=row["stream"], text=row["text"]
    )
