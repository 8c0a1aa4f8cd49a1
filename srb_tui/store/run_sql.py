"""Run columns: what ``update_run`` may change (and how each is checked) and the filters
and sort keys of the run lists (``list_runs``, ``count_runs``, the reports' reader)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypedDict, Unpack, cast

from srb_tui.store.convert import (
    dump_json,
    maybe_str,
    need_bool,
    need_int,
    need_number,
    need_object,
    need_text,
    need_text_list,
)
from srb_tui.store.errors import StoreError
from srb_tui.store.lifecycle import is_status
from srb_tui.store.run_extra import LOCAL_NODE, MUTANT_AGENT_PREFIX, NODE


def opt_text(value: Any, what: str) -> Any:
    return need_text(value, what, optional=True)


def _valid(value: Any, what: str) -> Any:
    flag = need_bool(value, what, optional=True)
    return None if flag is None else int(flag)


def encode_notes(value: Any, what: str) -> Any:
    return dump_json(need_text_list(value, what), what)


def encode_extra(value: Any, what: str) -> Any:
    return dump_json(need_object(value, what), what)


def _count(value: Any, what: str) -> Any:
    number = need_int(value, what)
    if number is not None and number < 0:
        raise StoreError(f"{what}: must not be negative, got {number}")
    return number


# Fields update_run may change, each with its check-and-encode function.
UPDATABLE_RUN_FIELDS: Final[Mapping[str, Callable[[Any, str], Any]]] = {
    "phase": opt_text,
    "stop_reason": opt_text,
    "started_at": opt_text,
    "finished_at": opt_text,
    "valid": _valid,
    "score": need_number,
    "max_score": need_number,
    "blocked_by": opt_text,
    "harness_error": maybe_str,
    "notes": encode_notes,
    "grader_fingerprint": opt_text,
    "submission_files": _count,
    "submission_bytes": _count,
    "model": opt_text,
    "effort": opt_text,
    "budget_sec": need_number,
    "batch_id": opt_text,
    "extra": encode_extra,
}

# Sort keys list_runs accepts (prefix "-" for descending); NULLs always sort last.
RUN_SORT_KEYS: Final[Mapping[str, str]] = {
    "created_at": "created_at",
    "updated_at": "updated_at",
    "started_at": "started_at",
    "finished_at": "finished_at",
    "score": "score",
    "task": "task_id",
    "task_id": "task_id",
    "status": "status",
    "agent": "agent",
    "model": "model",
    "id": "id",
}

StrFilter = str | Sequence[str] | None


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _in_clause(column: str, value: StrFilter, what: str) -> tuple[str, list[Any]]:
    values = [value] if isinstance(value, str) else list(value or ())
    for item in values:
        need_text(item, what)
    return f"{column} IN ({', '.join('?' for _ in values)})", list(values)


# the node a run was placed on; runs of the local backend record none and read as "local"
NODE_SQL = f"COALESCE(json_extract(extra, '$.{NODE}'), '{LOCAL_NODE}')"


class ReportFilters(TypedDict, total=False):
    """The run filters of ``report_source``: each a value or several (``text``: a
    case-insensitive substring); an absent or None filter keeps all."""

    task: StrFilter
    status: StrFilter
    agent: StrFilter
    model: StrFilter
    node: StrFilter
    text: str | None


class RunFilters(ReportFilters, total=False):
    """The run filters of ``list_runs``, ``count_runs`` and ``run_filter_sql``."""

    batch: StrFilter


def run_filter_sql(**filters: Unpack[RunFilters]) -> tuple[str, list[Any]]:
    """A ``WHERE`` clause (possibly empty) and its parameters for the run filters."""
    clauses: list[str] = []
    params: list[Any] = []
    for column, key in (
        ("task_id", "task"),
        ("status", "status"),
        ("agent", "agent"),
        ("model", "model"),
        ("batch_id", "batch"),
        (NODE_SQL, "node"),
    ):
        value = cast(StrFilter, filters.get(key))
        what = f"{key} filter"
        if value is None:
            continue
        if column == "status":
            for item in [value] if isinstance(value, str) else value:
                if not is_status(item):
                    raise StoreError(f"status filter: unknown run status {item!r}")
        clause, values = _in_clause(column, value, what)
        clauses.append(clause)
        params.extend(values)
    if filters.get("agent") is None:
        # a strength campaign's mutant runs are instrument measurements, not submissions
        clauses.append("agent NOT LIKE ?")
        params.append(MUTANT_AGENT_PREFIX + "%")
    text = filters.get("text")
    if text:
        pattern = f"%{_escape_like(text)}%"
        columns = ("id", "task_id", "agent", "model", "phase", "notes", "harness_error")
        clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in columns) + ")")
        params.extend([pattern] * len(columns))
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    return where, params


def run_order_sql(sort: str) -> str:
    """An ``ORDER BY`` clause for ``sort`` (``"score"`` or ``"-score"``), ties by id."""
    descending = sort.startswith("-")
    key = sort[1:] if descending else sort
    column = RUN_SORT_KEYS.get(key)
    if column is None:
        raise StoreError(
            f"unknown sort key {sort!r}; use one of {', '.join(sorted(RUN_SORT_KEYS))}"
            " (prefix - for descending)"
        )
    direction = "DESC" if descending else "ASC"
    return f"ORDER BY {column} IS NULL, {column} {direction}, id {direction}"
